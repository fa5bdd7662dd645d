"""A Delta table's history, RESTORE and VACUUM on real tables, and a real commit conflict with a second
writer (delta-rs) committing between this run's snapshot and its commit."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import ModelRunError, Warehouse
from dagster_streamt.spark.delta.delta_history import data_files, history
from dagster_streamt.spark.delta.delta_maintenance import check_target, restore, vacuum
from dagster_streamt.spark.delta.delta_table import current_commit
from dagster_streamt.spark.storage.paths import ProjectPaths

from .helpers import jsonl, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "customer", "type": "string"},
           {"name": "amount", "type": "double"}]
ORDERS = [{"order_id": 1, "customer": "ann", "amount": 10.0}, {"order_id": 2, "customer": "bob", "amount": -5.0},
          {"order_id": 3, "customer": "ann", "amount": 7.5}]


def _project(tmp_project: Any, sql: str = "order_id", **delta: Any) -> Any:
    runtime = {"runtime": {"spark": {"delta": delta}}} if delta else {}
    return tmp_project({
        **runtime,
        "sources": [{"name": "orders_raw", "format": "json", "path": "data/orders", "columns": COLUMNS}],
        "models": [{"name": "orders_clean", "materialized": "table",
                    "sql": f'SELECT {sql} AS order_id, customer, amount FROM {{{{ source("orders_raw") }}}} '
                           'WHERE amount > 0'}],
    }, {"data/orders/part1.json": jsonl(ORDERS)})


def _ids(path: Path, version: int | None = None) -> list[int]:
    from deltalake import DeltaTable

    return sorted(DeltaTable(str(path), version=version).to_pyarrow_table().column("order_id").to_pylist())


def _two_versions(spark: Any, project: Any) -> Path:
    """Version 0: a full build of part1 (ids 1, 3); version 1: part2 (id 9) appended."""
    assert run(spark, project, ["orders_clean"])["orders_clean"].ok
    (project.root / "data/orders/part2.json").write_text(jsonl([dict(ORDERS[0], order_id=9, amount=4.0)]))
    second = run(spark, project, ["orders_clean"])["orders_clean"]
    assert second.ok and second.refresh == "append" and second.delta_version == 1, second.error
    return Warehouse.for_project(project).data_dir("orders_clean")


def test_history_lists_versions_newest_first_with_rows_and_refresh(spark: Any, tmp_project: Any) -> None:
    table = _two_versions(spark, _project(tmp_project))
    got = [(v.version, v.operation, v.rows_added, v.rows_removed, v.table_rows) for v in history(table)]
    assert got == [(1, "WRITE (Append)", 1, 0, 3), (0, "WRITE (Overwrite)", 2, 0, 2)]
    notes = [v.note for v in history(table)]
    assert notes == ["incremental refresh 1 since the last build (append) over 2 input file(s) of source:orders_raw",
                     "full build (append) over 1 input file(s) of source:orders_raw"]
    assert [v.version for v in history(table, 1)] == [1]
    assert all(v.timestamp.endswith("Z") for v in history(table))


def test_restore_brings_back_the_old_rows_and_the_next_run_refreshes_from_them(spark: Any,
                                                                               tmp_project: Any) -> None:
    project = _project(tmp_project)
    table = _two_versions(spark, project)
    wh = Warehouse.for_project(project)
    done = restore(spark, wh, "orders_clean", 0)
    assert (done.restored, done.version, done.rows) == (0, 2, 2)
    assert _ids(table) == _ids(table, 0) == [1, 3]
    commit = current_commit(table)
    assert commit is not None and (commit.version, commit.rows) == (2, 2)
    top = history(table)[0]
    assert (top.version, top.operation, top.restored_from, top.table_rows) == (2, "RESTORE", 0, 2)
    assert (top.rows_added, top.rows_removed) == (0, 1)  # version 1's appended file (id 9) is removed again
    assert top.note is not None and top.note.startswith("full build")  # version 0's record, carried over
    # the restored record read part1 only: part2 counts as new, and is appended again (no full rebuild)
    again = run(spark, project, ["orders_clean"])["orders_clean"]
    assert (again.refresh, again.rows_written, again.table_rows, again.delta_version) == ("append", 1, 3, 3)
    assert _ids(table) == [1, 3, 9]


def test_restore_refuses_versions_out_of_range(spark: Any, tmp_project: Any) -> None:
    table = _two_versions(spark, _project(tmp_project))
    with pytest.raises(ModelRunError, match=r"version 5 is out of range: .* versions 0\.\.0 \(current: 1;"):
        check_target("orders_clean", table, 5)
    with pytest.raises(ModelRunError, match="version 1 is already the current version"):
        check_target("orders_clean", table, 1)


def _rebuild(spark: Any, project: Any) -> None:
    """A third version that removes every file of the first two (part1 rewritten: a full rebuild)."""
    (project.root / "data/orders/part1.json").write_text(jsonl(ORDERS[:1]))
    third = run(spark, project, ["orders_clean"])["orders_clean"]
    assert third.ok and third.refresh == "full" and third.delta_version == 2, third.error


def test_vacuum_deletes_exactly_the_unreferenced_files_older_than_the_retention(spark: Any,
                                                                              tmp_project: Any) -> None:
    project = _project(tmp_project, vacuum_retention_hours=0)
    assert project.runtime.spark.delta.vacuum_retention_hours == 0
    table = _two_versions(spark, project)
    _rebuild(spark, project)
    wh, paths = Warehouse.for_project(project), ProjectPaths.from_project(project)
    on_disk = {str(p.relative_to(table)) for p in table.glob("*.parquet")}
    current = set(data_files(table, 2))
    old = on_disk - current
    assert current and len(old) == len(set(data_files(table, 0)) | set(data_files(table, 1)))

    kept = vacuum(spark, wh, paths, "orders_clean", 168)  # the default: every file is younger than a week
    assert (kept.files, kept.bytes) == (0, 0)
    dry = vacuum(spark, wh, paths, "orders_clean", 0, dry_run=True)
    assert dry.files == len(old) and {str(p.relative_to(table)) for p in table.glob("*.parquet")} == on_disk
    gone = vacuum(spark, wh, paths, "orders_clean", 0)
    assert (gone.files, gone.bytes) == (len(old), dry.bytes) and dry.bytes > 0
    assert {str(p.relative_to(table)) for p in table.glob("*.parquet")} == current
    assert _ids(table) == [1, 9] and spark.conf.get("spark.databricks.delta.retentionDurationCheck.enabled",
                                                    "true") == "true"  # the check is back on afterwards
    with pytest.raises(ModelRunError, match=r"data file\(s\) of version 0 were deleted by VACUUM"):
        check_target("orders_clean", table, 0)


def test_a_concurrent_writer_between_snapshot_and_commit_is_explained(spark: Any, tmp_project: Any,
                                                                      tmp_path: Path) -> None:
    """While our full rebuild writes its files, a Python UDF of its query commits an overwrite of the same table
    with delta-rs (a second engine, as another machine or a notebook would): Delta refuses our commit."""
    arm, fired = tmp_path / "arm", tmp_path / "fired"
    project = _project(tmp_project, sql="interfere(order_id)")
    table = Warehouse.for_project(project).data_dir("orders_clean")

    def interfere(x: int) -> int:
        if not os.path.exists(arm):
            return x
        try:
            os.close(os.open(fired, os.O_CREAT | os.O_EXCL))  # once, whichever task gets here first
        except FileExistsError:
            return x
        import deltalake
        import pyarrow as pa

        rows = pa.table({"order_id": pa.array([77], pa.int64()), "customer": ["zed"], "amount": [1.0]})
        deltalake.write_deltalake(str(table), rows, mode="overwrite")
        return x

    spark.udf.register("interfere", interfere, "bigint")
    assert run(spark, project, ["orders_clean"])["orders_clean"].ok
    arm.touch()
    (project.root / "data/orders/part1.json").write_text(jsonl(ORDERS[:1]))  # a full rebuild: an overwrite
    lost = run(spark, project, ["orders_clean"])["orders_clean"]
    assert not lost.ok and fired.exists()
    assert lost.error is not None
    assert lost.error.startswith(f"model orders_clean: another writer committed to its Delta table {table} "
                                 "(version 1) while this run was writing: it added data this run should have "
                                 "read (Delta DELTA_CONCURRENT_APPEND: ")
    assert lost.error.endswith("This run committed nothing and the table holds the other writer's version 1. "
                               "Fix: rerun the model (`streamt run -s orders_clean`); if a second machine, "
                               "schedule or notebook writes this table, let one writer own it (our per-model "
                               "lock only serializes writers on one machine)")
    assert _ids(table) == [77]  # the winner's version
    rerun = run(spark, project, ["orders_clean"])["orders_clean"]
    assert rerun.ok and rerun.refresh == "full" and _ids(table) == [1], rerun.error
