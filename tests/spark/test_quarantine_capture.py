"""A table's own scan of a fresh JSON/CSV source finds its malformed records (one parse, not two); every
case where that scan cannot vouch for the whole source falls back to the separate pass, with the same
quarantine and counts."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import Warehouse, read_quarantine
from dagster_streamt.spark import quarantine_capture as capture

from .helpers import rows, run

pytestmark = pytest.mark.spark

GOOD = '{"order_id": 1, "amount": 10.0}\n{"order_id": 2, "amount": 20.0}\n'
LONG = '{"order_id": 5, "amount": 5.0, "note": "' + "x" * 200 + '"'  # truncated JSON, 240 characters
BAD = '{"order_id": 3, "amount": "lots"}\n{not json at all\n' + LONG + "\n"
COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]
EXPECTED = sorted(['{"order_id": 3, "amount": "lots"}', "{not json at all", LONG])


def make(tmp_project: Any, sql: str, files: dict[str, str] | None = None, name: str = "proj") -> Any:
    return tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS},
                    {"name": "empty_raw", "format": "json", "path": "empty", "columns": COLUMNS}],
        "models": [{"name": "orders", "materialized": "table", "sql": sql}],
    }, files or {"landing/a.json": GOOD + BAD, "empty/e.json": ""}, name)


def quarantined(spark: Any, project: Any) -> list[str]:
    return sorted(r["raw_record"] for r in read_quarantine(spark, Warehouse.for_project(project), "orders_raw")
                  .collect())


def test_the_model_scan_finds_the_corrupt_records(spark: Any, tmp_project: Any) -> None:
    project = make(tmp_project, 'SELECT order_id, amount FROM {{ source("orders_raw") }} WHERE amount > 0')
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert "orders_raw__scan_orders" in (result.sql or "")  # the source view of this model's own scan
    assert (result.rows_written, result.quarantined_rows, result.input_rows) == (2, 3, 2)
    assert quarantined(spark, project) == EXPECTED
    q = read_quarantine(spark, Warehouse.for_project(project), "orders_raw").collect()
    reasons = {r["raw_record"]: r["reason"] for r in q}
    assert "does not match the declared columns" in reasons['{"order_id": 3, "amount": "lots"}']
    assert "could not be parsed" in reasons["{not json at all"]
    assert all(r["source_file"].endswith("landing/a.json") and r["loaded_at"] and r["run_id"] for r in q)
    assert sorted(r["order_id"] for r in rows(spark, Warehouse.for_project(project).table_location("orders"))) \
        == [1, 2]

    again = run(spark, project)["orders"]  # nothing new: the ledger answers, nothing is added
    assert (again.rows_written, again.table_rows, again.quarantined_rows, again.input_rows) == (0, 2, 3, 0)
    assert quarantined(spark, project) == EXPECTED


@pytest.mark.parametrize("sql", [
    'SELECT order_id, amount FROM {{ source("orders_raw") }} LIMIT 1',
    'SELECT a.order_id, b.amount FROM {{ source("orders_raw") }} a JOIN {{ source("orders_raw") }} b '
    'ON a.order_id = b.order_id',
    'SELECT order_id FROM {{ source("orders_raw") }} o WHERE EXISTS (SELECT 1 FROM {{ source("empty_raw") }})',
])
def test_queries_that_may_stop_early_keep_the_separate_pass(spark: Any, tmp_project: Any, sql: str) -> None:
    project = make(tmp_project, sql)
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert "__scan_" not in (result.sql or "")
    assert result.quarantined_rows == 3
    assert quarantined(spark, project) == EXPECTED


def test_a_join_cut_short_falls_back_to_the_separate_pass(spark: Any, tmp_project: Any) -> None:
    """The other side is empty: Spark skips the source's scan, the capture comes back empty."""
    project = make(tmp_project, 'SELECT o.order_id FROM {{ source("orders_raw") }} o '
                                'JOIN {{ source("empty_raw") }} e ON o.order_id = e.order_id')
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert "orders_raw__scan_orders" in (result.sql or "")
    assert (result.rows_written, result.quarantined_rows, result.input_rows) == (0, 3, 2)
    assert quarantined(spark, project) == EXPECTED


@pytest.mark.parametrize("bound", ["LIMIT", "PREFIX"])
def test_too_many_or_too_long_records_fall_back(spark: Any, tmp_project: Any, monkeypatch: Any, bound: str) -> None:
    """Beyond the bounds the records are not carried back with the job: none is lost or cut short."""
    monkeypatch.setattr(capture, bound, 2 if bound == "LIMIT" else 100)
    project = make(tmp_project, 'SELECT order_id, amount FROM {{ source("orders_raw") }}')
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert (result.rows_written, result.quarantined_rows) == (2, 3)
    assert quarantined(spark, project) == EXPECTED  # the 240-character record whole


def test_two_tables_on_one_source_quarantine_once(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "csv", "path": "landing",
                     "columns": COLUMNS}],
        "models": [{"name": "ids", "materialized": "table", "sql": 'SELECT order_id FROM {{ source("orders_raw") }}'},
                   {"name": "total", "materialized": "table",
                    "sql": 'SELECT sum(amount) AS total FROM {{ source("orders_raw") }}'}],
    }, {"landing/a.csv": "order_id,amount\n1,2.5\nx,3\n2,4\n", "landing/b.csv": "order_id,amount\n3,oops\n"})
    results = run(spark, project)
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    assert {r.quarantined_rows for r in results.values()} == {2}
    assert sorted(r["raw_record"] for r in read_quarantine(spark, Warehouse.for_project(project), "orders_raw")
                  .collect()) == ["3,oops", "x,3"]
    wh = Warehouse.for_project(project)
    assert rows(spark, wh.table_location("total")) == [{"total": 6.5}]
