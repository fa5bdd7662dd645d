"""Keyed tables (a ``table`` model with streamt's ``key:``): one row per key, the latest by event time;
a refresh from appended files is a Delta ``MERGE`` on the key that equals a rebuild from scratch; a
shared key nothing can order stops the run with a located error and leaves the table as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.delta.delta_table import current_commit, current_version

from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "customer_id", "type": "bigint"}, {"name": "name", "type": "string"},
           {"name": "tier", "type": "string"}, {"name": "updated_at", "type": "timestamp"}]
FIRST = [  # customer 1 changed twice in the first file: its latest row is kept
    {"customer_id": 1, "name": "ann", "tier": "silver", "updated_at": "2024-01-01T10:00:00"},
    {"customer_id": 1, "name": "ann", "tier": "gold", "updated_at": "2024-01-02T10:00:00"},
    {"customer_id": 2, "name": "bob", "tier": "bronze", "updated_at": "2024-01-01T09:00:00"},
    {"customer_id": None, "name": "walk-in", "tier": "none", "updated_at": "2024-01-01T08:00:00"},
]
SECOND = [  # a newer row for 2, an older one for 1 (ignored), a new customer, a newer NULL-key row
    {"customer_id": 2, "name": "bob", "tier": "silver", "updated_at": "2024-01-03T09:00:00"},
    {"customer_id": 1, "name": "ann", "tier": "bronze", "updated_at": "2024-01-01T12:00:00"},
    {"customer_id": 3, "name": "cid", "tier": "gold", "updated_at": "2024-01-02T00:00:00"},
    {"customer_id": None, "name": "walk-in", "tier": "some", "updated_at": "2024-01-04T08:00:00"},
]
SQL = 'SELECT customer_id, name, tier, updated_at FROM {{ source("customers_raw") }}'


def customers(tmp_project: Any, name: str, event_time: bool = True, key: Any = "customer_id",
              sql: str = SQL, first: list[dict[str, Any]] | None = None) -> Any:
    source: dict[str, Any] = {"name": "customers_raw", "format": "json", "path": "data/customers",
                              "columns": COLUMNS}
    if event_time:
        source["event_time"] = {"column": "updated_at", "watermark": "1 hour"}
    return tmp_project({"sources": [source],
                        "models": [{"name": "customers", "materialized": "table", "key": key, "sql": sql}]},
                       {"data/customers/part-1.json": jsonl(FIRST if first is None else first)}, name=name)


def current(spark: Any, project: Any) -> list[tuple[Any, ...]]:
    location = Warehouse.for_project(project).table_location("customers")
    assert location is not None
    return sorted(((r["customer_id"], r["tier"]) for r in rows(spark, location)), key=repr)


def add(project: Any, name: str, records: list[dict[str, Any]]) -> Path:
    path = project.root / "data" / "customers" / name
    path.write_text(jsonl(records), encoding="utf-8")
    return path


def test_keyed_table_keeps_the_latest_row_per_key_and_upserts_appended_files(spark: Any, tmp_project: Any) -> None:
    project = customers(tmp_project, "latest")
    first = run(spark, project)["customers"]
    assert first.ok, first.error
    assert current(spark, project) == [(1, "gold"), (2, "bronze"), (None, "none")]
    assert first.rows_written == 3 and first.table_rows == 3

    add(project, "part-2.json", SECOND)
    killed = Warehouse.for_project(project).model_dir("customers") / ".scratch-killedrun" / "upsert"
    killed.mkdir(parents=True)  # what a run killed between its staging and its MERGE leaves
    upserted = run(spark, project)["customers"]
    assert not killed.parent.exists()
    assert upserted.ok, upserted.error
    assert upserted.refresh == "upsert" and "by key" in (upserted.refresh_note or "")
    expected = [(1, "gold"), (2, "silver"), (3, "gold"), (None, "some")]
    assert current(spark, project) == expected
    assert upserted.rows_written == 3  # 2 and NULL replaced, 3 inserted; 1's older row changed nothing
    assert upserted.table_rows == 4

    table = Warehouse.for_project(project).data_dir("customers")
    commit = current_commit(table)
    assert commit is not None and commit.record is not None and commit.record.refreshes == 1
    assert DeltaTable(str(table)).history(1)[0]["operation"] == "MERGE"
    by_rs = DeltaTable(str(table)).to_pyarrow_table().to_pylist()  # another engine reads the same rows
    assert sorted(((r["customer_id"], r["tier"]) for r in by_rs), key=repr) == expected

    assert run(spark, project)["customers"].refresh == "unchanged"  # the MERGE's commit carries its record
    rebuilt = run(spark, project, full_refresh=["customers"])["customers"]  # the increment equals a rebuild
    assert rebuilt.refresh == "full" and current(spark, project) == expected


def test_a_shared_key_without_event_time_stops_the_run_and_changes_nothing(spark: Any, tmp_project: Any) -> None:
    project = customers(tmp_project, "shared", event_time=False)
    failed = run(spark, project)["customers"]
    assert failed.status == "failed"
    assert "model customers: stream_project.yml:" in failed.error and "rows share the key (customer_id)" in failed.error
    assert "customer_id=1" in failed.error and "declare `event_time:`" in failed.error
    assert current_version(Warehouse.for_project(project).data_dir("customers")) is None

    unique = customers(tmp_project, "unique", event_time=False, first=[FIRST[1], FIRST[2]])
    assert run(spark, unique)["customers"].ok
    table = Warehouse.for_project(unique).data_dir("customers")
    version = current_version(table)
    add(unique, "part-2.json", [SECOND[2]])  # a new key beyond the stored ones: no row can match, appended
    assert run(spark, unique)["customers"].refresh == "upsert"
    assert DeltaTable(str(table)).history(1)[0]["operation"] == "WRITE"
    assert current_commit(table).record.refreshes == 1  # type: ignore[union-attr]
    assert current(spark, unique) == [(1, "gold"), (2, "bronze"), (3, "gold")]
    version = current_version(table)
    add(unique, "part-3.json", [SECOND[0]])  # a known key, and nothing says which row is the latest
    known = run(spark, unique)["customers"]
    assert known.status == "failed"
    assert "a row of the new input files has the key (customer_id=2) of a row already in the table" in known.error
    assert current_version(table) == version
    assert current(spark, unique) == [(1, "gold"), (2, "bronze"), (3, "gold")]


def test_key_columns_must_be_output_columns(spark: Any, tmp_project: Any) -> None:
    project = customers(tmp_project, "missing", key="customer_id, region")
    failed = run(spark, project)["customers"]
    assert failed.status == "failed"
    assert "model customers: stream_project.yml:" in failed.error and "fix `key:`" in failed.error
    assert "key column(s) region are not in its output" in failed.error


def test_a_keyed_aggregation_merges_its_state_and_checks_its_key(spark: Any, tmp_project: Any) -> None:
    sql = ('SELECT tier, count(*) AS n, max(updated_at) AS updated_at FROM {{ source("customers_raw") }} '
           'GROUP BY tier')
    project = customers(tmp_project, "agg", key="tier", sql=sql)
    assert run(spark, project)["customers"].ok
    add(project, "part-2.json", SECOND)
    merged = run(spark, project)["customers"]
    assert merged.ok and merged.refresh == "merge"
    location = Warehouse.for_project(project).table_location("customers")
    assert location is not None
    assert sorted((r["tier"], r["n"]) for r in rows(spark, location)) == [
        ("bronze", 2), ("gold", 2), ("none", 1), ("silver", 2), ("some", 1)]


def test_only_a_raised_key_fault_is_explained_not_a_statement_that_quotes_it() -> None:
    from dagster_streamt.spark.delta.keyed_table import TableKey, explain

    key = TableKey("m", ("a", "b"), None, "p.yml:3: ")
    raised = explain(Exception("Caused by: SparkRuntimeException: [USER_RAISED_EXCEPTION] "
                               "streamt-key-fault:shared:a=1, b=NULL SQLSTATE: P0001\n\tat x"), key)
    assert raised is not None and str(raised).startswith("model m: p.yml:3: rows share the key (a, b): a=1, b=NULL,")
    plan = "[TABLE_OR_VIEW_NOT_FOUND] ... raise_error(concat(streamt-key-fault:known:, a=), 'coalesce(...)"
    assert explain(Exception(plan), key) is None  # another failure that merely shows the MERGE's text


def test_the_merge_bounds_each_orderable_key_by_the_new_rows(spark: Any) -> None:
    """The bounds Delta skips files with: each orderable key column's smallest and largest new value, as
    typed literals; none when a new key is NULL (``<=>`` matches NULL) or no column is orderable."""
    from dagster_streamt.spark.delta.keyed_table import TableKey, _key_ranges

    key = TableKey("m", ("id", "day", "tags"), None, "")
    rows = spark.createDataFrame([(3, "2024-01-02", ["a"]), (7, "2024-01-01", ["b"])],
                                 "id bigint, day string, tags array<string>")
    rows = rows.selectExpr("id", "CAST(day AS DATE) AS day", "tags")
    assert _key_ranges(rows, key) == (" AND t.`id` BETWEEN CAST('3' AS bigint) AND CAST('7' AS bigint)"
                                      " AND t.`day` BETWEEN CAST('2024-01-01' AS date) AND CAST('2024-01-02' AS date)")
    with_null = rows.union(spark.createDataFrame([(None, None, None)], rows.schema))
    assert _key_ranges(with_null, key) == ""
    assert _key_ranges(rows.select("tags"), TableKey("m", ("tags",), None, "")) == ""


def test_odd_names_are_quoted_in_every_statement(spark: Any, tmp_project: Any) -> None:
    """A key column named ``cust`id`` in a project folder with a backtick: the source's schema, the
    latest row per key, the MERGE's range probe and the MERGE itself quote them alike
    (:mod:`dagster_streamt.sql.identifiers`)."""
    columns = [{"name": "cust`id", "type": "bigint"}, {"name": "tier", "type": "string"},
               {"name": "updated_at", "type": "timestamp"}]
    project = tmp_project({
        "sources": [{"name": "customers_raw", "format": "json", "path": "data/customers", "columns": columns,
                     "event_time": {"column": "updated_at", "watermark": "1 hour"}}],
        "models": [{"name": "customers", "materialized": "table", "key": "cust`id",
                    "sql": 'SELECT `cust``id`, tier, updated_at FROM {{ source("customers_raw") }}'}]},
        {"data/customers/part-1.json": jsonl({"cust`id": r["customer_id"], "tier": r["tier"],
                                              "updated_at": r["updated_at"]} for r in FIRST)}, name="odd`name")
    assert run(spark, project)["customers"].ok
    add(project, "part-2.json", [{"cust`id": r["customer_id"], "tier": r["tier"], "updated_at": r["updated_at"]}
                                 for r in SECOND])
    upserted = run(spark, project)["customers"]
    assert upserted.ok, upserted.error
    assert upserted.refresh == "upsert"
    location = Warehouse.for_project(project).table_location("customers")
    assert location is not None and "odd`name" in str(location)
    assert sorted(((r["cust`id"], r["tier"]) for r in rows(spark, location)), key=repr) == \
        [(1, "gold"), (2, "silver"), (3, "gold"), (None, "some")]
