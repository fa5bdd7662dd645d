"""Malformed records are never dropped silently: they land in <source>__quarantine and are counted."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import Warehouse, read_quarantine

from .helpers import rows, run

pytestmark = pytest.mark.spark

GOOD = '{"order_id": 1, "amount": 10.0}\n{"order_id": 2, "amount": 20.0}\n'
BAD = '{"order_id": 3, "amount": "lots"}\n{not json at all\n'
COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]


def project_with(tmp_project: Any, materialized: str, files: dict[str, str], fmt: str = "json") -> Any:
    return tmp_project({
        "sources": [{"name": "orders_raw", "format": fmt, "path": "landing", "columns": COLUMNS}],
        "models": [{"name": "orders", "materialized": materialized,
                    "sql": 'SELECT order_id, amount FROM {{ source("orders_raw") }}'}],
    }, files)


def test_batch_quarantine_counts_and_never_duplicates(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD})
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert (result.rows_written, result.quarantined_rows, result.input_rows) == (2, 2, 2)
    assert [c for c, _ in result.schema] == ["order_id", "amount"]  # no _corrupt_record downstream
    q = sorted(read_quarantine(spark, Warehouse.for_project(project), "orders_raw").collect(),
               key=lambda r: r["raw_record"])
    assert [r["raw_record"] for r in q] == ['{"order_id": 3, "amount": "lots"}', "{not json at all"]
    assert {r["source"] for r in q} == {"orders_raw"}
    assert "does not match the declared columns" in q[0]["reason"] and "could not be parsed" in q[1]["reason"]
    assert all(r["source_file"].endswith("landing/a.json") and r["loaded_at"] for r in q)

    again = run(spark, project)["orders"]
    assert again.refresh == "unchanged" and again.quarantined_rows == 2  # still diverted from this model's input
    rebuilt = run(spark, project, full_refresh=["orders"])["orders"]  # every record read again ...
    assert rebuilt.refresh == "full" and rebuilt.quarantined_rows == 2
    assert read_quarantine(spark, Warehouse.for_project(project), "orders_raw").count() == 2  # ... stored once


def test_batch_quarantine_parses_only_files_it_has_not_read(spark: Any, tmp_project: Any) -> None:
    """A table rereads its whole source, but the quarantine pass reads only new files; counts stay totals."""
    import json

    from dagster_streamt.spark.quarantine_ledger import LEDGER_FILE

    project = project_with(tmp_project, "table", {"landing/a b.json": GOOD + BAD})  # a space: paths round-trip
    wh = Warehouse.for_project(project)
    ledger = wh.quarantine_dir("orders_raw") / LEDGER_FILE

    def passes() -> list[list[str]]:
        return [sorted(p["files"]) for p in json.loads(ledger.read_text())["passes"]]

    first = run(spark, project)["orders"]
    assert (first.rows_written, first.quarantined_rows, first.input_rows) == (2, 2, 2), first.error
    landing = project.root / "landing"
    assert passes() == [[str(landing / "a b.json")]]

    again = run(spark, project)["orders"]  # nothing new: no pass, the same totals, nothing read
    assert (again.rows_written, again.table_rows, again.quarantined_rows, again.input_rows) == (0, 2, 2, 0)
    assert passes() == [[str(landing / "a b.json")]]

    (landing / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": oops}\n')
    third = run(spark, project)["orders"]  # one new file: the table reads it alone, its pass too
    assert (third.rows_written, third.table_rows, third.quarantined_rows, third.input_rows) == (1, 3, 3, 1)
    assert passes() == [[str(landing / "a b.json")], [str(landing / "b.json")]]
    assert read_quarantine(spark, wh, "orders_raw").count() == 3

    (landing / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": 5, "amount": 2.0}\n')
    fourth = run(spark, project)["orders"]  # a file changed: everything is read again
    assert (fourth.rows_written, fourth.table_rows, fourth.quarantined_rows, fourth.input_rows) == (4, 4, 2, 4)
    assert passes() == [[str(landing / "a b.json"), str(landing / "b.json")]]

    ledger.write_text("{not json")  # a damaged ledger only costs a full pass
    assert run(spark, project)["orders"].quarantined_rows == 2


def test_stream_quarantine_counts_only_new_records(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, "stream", {"landing/a.json": GOOD + BAD})
    first = run(spark, project)["orders"]
    assert first.ok, first.error
    assert (first.rows_written, first.quarantined_rows) == (2, 2)

    (project.root / "landing" / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": oops}\n')
    second = run(spark, project)["orders"]
    assert (second.rows_written, second.quarantined_rows) == (1, 1)
    wh = Warehouse.for_project(project)
    assert sorted(r["order_id"] for r in rows(spark, wh.table_location("orders"))) == [1, 2, 4]
    assert read_quarantine(spark, wh, "orders_raw").count() == 3


def test_csv_type_errors_are_quarantined(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, "table", {"landing/a.csv": "order_id,amount\n1,2.5\nx,3\n2,4\n"}, "csv")
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert (result.rows_written, result.quarantined_rows) == (2, 1)
    assert read_quarantine(spark, Warehouse.for_project(project), "orders_raw").first()["raw_record"] == "x,3"


def test_count_only_model_and_unused_bad_column(spark: Any, tmp_project: Any) -> None:
    """`SELECT count(*)` needs no data column (Spark would refuse a corrupt-column-only scan), and a
    bad value in a column the model does not select still keeps the row out."""
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS}],
        "models": [
            {"name": "n", "materialized": "table", "sql": 'SELECT count(*) AS n FROM {{ source("orders_raw") }}'},
            {"name": "ids", "materialized": "table", "sql": 'SELECT order_id FROM {{ source("orders_raw") }}'},
        ],
    }, {"landing/a.json": GOOD + BAD})
    results = run(spark, project)
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    wh = Warehouse.for_project(project)
    assert rows(spark, wh.table_location("n")) == [{"n": 2}]
    assert sorted(r["order_id"] for r in rows(spark, wh.table_location("ids"))) == [1, 2]  # not 3 ("lots")
