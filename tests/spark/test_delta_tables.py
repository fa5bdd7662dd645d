"""Tables and stream outputs are Delta tables: one commit per refresh, readable by delta-rs without Spark
with the same rows, the refresh record carried by the commit, earlier versions intact for time travel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.dagster.result_metadata import result_metadata
from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.delta.delta_table import current_commit

from .helpers import jsonl, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "customer", "type": "string"},
           {"name": "amount", "type": "double"}, {"name": "ts", "type": "timestamp"}]
ORDERS = [
    {"order_id": 1, "customer": "ann", "amount": 10.0, "ts": "2024-01-01T00:00:00Z"},
    {"order_id": 2, "customer": "bob", "amount": -5.0, "ts": "2024-01-01T00:01:00Z"},
    {"order_id": 3, "customer": "ann", "amount": 7.5, "ts": "2024-01-01T00:02:00Z"},
]


def _project(tmp_project: Any) -> Any:
    return tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "data/orders", "columns": COLUMNS}],
        "models": [
            {"name": "orders_clean", "materialized": "table",
             "sql": 'SELECT order_id, customer, amount FROM {{ source("orders_raw") }} WHERE amount > 0'},
            {"name": "per_customer", "materialized": "table",
             "sql": 'SELECT customer, count(*) AS n, sum(amount) AS total FROM {{ ref("orders_clean") }} '
                    'GROUP BY customer'},
            {"name": "orders_stream", "materialized": "stream",
             "sql": 'SELECT order_id, amount FROM {{ source("orders_raw") }}'},
        ],
    }, {"data/orders/part1.json": jsonl(ORDERS)})


def _delta_rs(path: Path, columns: list[str], version: int | None = None) -> list[tuple[Any, ...]]:
    """The table's rows read by delta-rs (the ``deltalake`` package): no JVM involved."""
    from deltalake import DeltaTable

    table = DeltaTable(str(path), version=version).to_pyarrow_table()
    return sorted(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def _spark(spark: Any, path: Path, columns: list[str]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in columns) for r in spark.read.format("delta").load(str(path)).collect())


def _history(path: Path) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    return sorted(DeltaTable(str(path)).history(), key=lambda h: int(h["version"]))


def test_a_table_is_a_delta_table_that_delta_rs_reads(spark: Any, tmp_project: Any) -> None:
    project = _project(tmp_project)
    wh = Warehouse.for_project(project)
    first = run(spark, project, ["orders_clean", "per_customer"])
    assert all(r.ok for r in first.values()), [r.error for r in first.values()]
    clean = wh.data_dir("orders_clean")
    assert (clean / "_delta_log").is_dir() and wh.table_location("orders_clean") == clean
    home = wh.model_dir("orders_clean")
    assert not list(home.glob("v=*")) and not (home / "_CURRENT").exists()
    cols = ["order_id", "customer", "amount"]
    assert _delta_rs(clean, cols) == _spark(spark, clean, cols) == [(1, "ann", 10.0), (3, "ann", 7.5)]
    agg = wh.data_dir("per_customer")
    assert _delta_rs(agg, ["customer", "n", "total"]) == [("ann", 2, 17.5)]

    result = first["orders_clean"]
    assert result.delta_version == 0 and result.table_rows == 2 and result.location == str(clean)
    md = result_metadata(result)
    assert md["table_format"] == "delta" and md["delta_version"] == 0
    assert md["read"] == f'deltalake.DeltaTable("{clean}").to_pandas()'
    frame = eval(md["read"], {"deltalake": __import__("deltalake")})  # the one line works as given
    assert sorted(frame["order_id"].tolist()) == [1, 3]

    commit = current_commit(clean)  # the log is the one record of the table: no file of ours beside it
    assert commit is not None and (commit.version, commit.rows) == (0, 2)
    assert not (wh.root / "_registry").exists()


def test_each_refresh_is_one_commit_and_the_old_version_stays_readable(spark: Any, tmp_project: Any) -> None:
    project = _project(tmp_project)
    wh = Warehouse.for_project(project)
    clean, agg = wh.data_dir("orders_clean"), wh.data_dir("per_customer")
    assert all(r.ok for r in run(spark, project, ["orders_clean", "per_customer"]).values())

    same = run(spark, project, ["orders_clean", "per_customer"])  # nothing new: no commit at all
    assert {r.refresh for r in same.values()} == {"unchanged"}
    assert [h["version"] for h in _history(clean)] == [0]

    (project.root / "data/orders/part2.json").write_text(jsonl([dict(ORDERS[0], order_id=9, amount=4.0)]))
    second = run(spark, project, ["orders_clean", "per_customer"])
    assert second["orders_clean"].refresh == "append", second["orders_clean"].refresh_note
    assert second["orders_clean"].rows_written == 1 and second["orders_clean"].table_rows == 3
    assert second["per_customer"].refresh == "merge", second["per_customer"].refresh_note  # its Delta state
    ops = [(h["version"], h["operation"]) for h in _history(clean)]
    assert ops == [(0, "WRITE"), (1, "WRITE")]  # overwrite, then one append commit
    assert second["orders_clean"].delta_version == 1
    assert _delta_rs(clean, ["order_id"], version=0) == [(1,), (3,)]  # time travel: the previous version
    assert _delta_rs(clean, ["order_id"]) == _spark(spark, clean, ["order_id"]) == [(1,), (3,), (9,)]
    assert _delta_rs(agg, ["customer", "n", "total"]) == [("ann", 3, 21.5)]
    assert [h["version"] for h in _history(agg)] == [0, 1]

    record = current_commit(clean)
    assert record is not None and record.record is not None and record.record.refreshes == 1
    assert record.rows == 3 and len(record.files) == 2

    (project.root / "data/orders/part1.json").write_text(jsonl(ORDERS[:1]))  # rewritten: a full rebuild
    third = run(spark, project, ["orders_clean"])["orders_clean"]
    assert third.refresh == "full" and third.table_rows == 2 and third.delta_version == 2
    assert _delta_rs(clean, ["order_id"]) == [(1,), (9,)]
    assert _delta_rs(clean, ["order_id"], version=1) == [(1,), (3,), (9,)]

    full = run(spark, project, ["orders_clean"], full_refresh=["orders_clean"])["orders_clean"]
    assert full.refresh == "full" and full.delta_version == 3 and _delta_rs(clean, ["order_id"]) == [(1,), (9,)]


def test_a_stream_writes_a_delta_table_once_per_record(spark: Any, tmp_project: Any) -> None:
    project = _project(tmp_project)
    wh = Warehouse.for_project(project)
    out = wh.data_dir("orders_stream")
    first = run(spark, project, ["orders_stream"])["orders_stream"]
    assert first.ok, first.error
    assert (out / "_delta_log").is_dir() and not (out / "_spark_metadata").exists()
    assert first.table_rows == 3 and first.delta_version is not None
    again = run(spark, project, ["orders_stream"])["orders_stream"]  # nothing new arrived
    assert again.ok and again.rows_written in (0, None) and again.table_rows == 3
    (project.root / "data/orders/part2.json").write_text(jsonl([dict(ORDERS[0], order_id=9)]))
    third = run(spark, project, ["orders_stream"])["orders_stream"]
    assert third.ok and third.table_rows == 4
    assert _delta_rs(out, ["order_id", "amount"]) == _spark(spark, out, ["order_id", "amount"]) == [
        (1, 10.0), (2, -5.0), (3, 7.5), (9, 10.0)]
    assert all(h["operation"] == "STREAMING UPDATE" for h in _history(out))


def test_columns_read_from_the_log_without_pyspark_are_what_spark_reports(spark: Any, tmp_path: Path) -> None:
    """A run with nothing new reports each table's columns from its Delta log, without importing pyspark:
    they must be the pairs Spark's own schema gives, nested and renamed types included."""
    from dagster_streamt.spark.run.output import schema_pairs

    path = str(tmp_path / "typed")
    spark.sql("""SELECT CAST(1 AS BIGINT) AS id, CAST(2 AS INT) AS i, CAST(3 AS SMALLINT) AS s, CAST(4 AS TINYINT) AS t,
                        CAST(1.5 AS DECIMAL(10, 2)) AS d, CAST(1.5 AS FLOAT) AS f, 2.5D AS dbl, true AS b,
                        X'01' AS bin, DATE'2026-01-01' AS day, TIMESTAMP'2026-01-01 00:00:00' AS ts,
                        TIMESTAMP_NTZ'2026-01-01 00:00:00' AS ntz, 'x' AS str,
                        named_struct('a', 1L, 'inner', named_struct('z', array(1.0D))) AS nested,
                        array(named_struct('k', 'v')) AS items, map('k', array(1)) AS lookup""") \
        .write.format("delta").save(path)
    commit = current_commit(Path(path))
    assert commit is not None
    schema = commit.schema()
    assert schema is not None
    assert commit.columns() == schema_pairs(schema)
    assert dict(commit.columns())["nested"] == "struct<a:bigint,inner:struct<z:array<double>>>"
