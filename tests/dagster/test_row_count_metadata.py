"""``dagster/row_count`` is the stored table's row count after every materialization (full build,
nothing new, new data), read back with Spark; ``rows_written`` is what this run wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.resources import SparkResource
from dagster_streamt.spark import Warehouse

from ..helpers import write_project

pytestmark = pytest.mark.spark

PROJECT = {
    "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data
            columns: [{name: id, type: bigint}, {name: kind, type: string}, {name: ts, type: timestamp}]
        """,
    "models/m.yml": """\
        models:
          - name: clean
            materialized: table
            sql: SELECT id, kind FROM {{ source("events") }} WHERE id IS NOT NULL
          - name: per_kind
            materialized: table
            sql: SELECT kind, count(*) AS n FROM {{ ref("clean") }} GROUP BY kind
          - name: live
            materialized: stream
            sql: SELECT id, kind FROM {{ source("events") }}
          - name: live_kinds
            materialized: stream
            sql: SELECT kind, count(*) AS n FROM {{ ref("live") }} GROUP BY kind
        """,
}


def add_events(root: Path, name: str, ids: range) -> None:
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / name).write_text("".join(json.dumps({"id": i, "kind": "ab"[i % 2], "ts": "2024-01-01 00:00:00"})
                                              + "\n" for i in ids))


def materialize(root: Path) -> dict[str, dict[str, Any]]:
    defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(instance=dg.DagsterInstance.ephemeral())
    assert result.success
    return {e.asset_key.to_user_string(): {k: v.value for k, v in e.materialization.metadata.items()}
            for e in result.get_asset_materialization_events()}


def stored(spark: Any, root: Path, name: str) -> int:
    location = Warehouse.for_project(load(root).project).table_location(name)
    assert location is not None
    return int(spark.read.format("delta").load(str(location)).count())


def test_row_count_is_the_table_size_after_every_run(spark: Any, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", PROJECT)
    add_events(root, "a.json", range(10))

    def check(mats: dict[str, dict[str, Any]], written: dict[str, int]) -> None:
        for name in ("clean", "per_kind", "live", "live_kinds"):
            assert mats[name]["dagster/row_count"] == stored(spark, root, name), name
        assert {n: mats[n]["rows_written"] for n in written} == written

    first = materialize(root)
    check(first, {"clean": 10, "per_kind": 2, "live": 10})
    assert first["clean"]["dagster/row_count"] == 10

    nothing_new = materialize(root)  # the tables are unchanged, not empty
    assert nothing_new["clean"]["refresh"] == "unchanged"
    check(nothing_new, {"clean": 0, "per_kind": 0, "live": 0})
    assert nothing_new["clean"]["dagster/row_count"] == 10 and nothing_new["live"]["dagster/row_count"] == 10

    add_events(root, "b.json", range(10, 13))
    more = materialize(root)
    assert (more["clean"]["refresh"], more["per_kind"]["refresh"]) == ("append", "merge")
    check(more, {"clean": 3, "live": 3})
    assert more["clean"]["dagster/row_count"] == 13 and more["live"]["dagster/row_count"] == 13
    # the stream's rows come from its Delta log's file statistics (no scan of the data)
    from dagster_streamt.spark.delta.delta_table import current_commit

    commit = current_commit(Warehouse.for_project(load(root).project).data_dir("live"))
    assert commit is not None and commit.rows == 13
