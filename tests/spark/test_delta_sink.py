"""Exports to a Delta table: one commit per publish, MERGE by key for upserts, a replayed micro-batch
skipped by Delta's idempotent writes, and key problems found before anything is published."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import ProjectPaths

from .helpers import rows, run
from .test_sinks import TIERS, exported, revenue_by_tier, revenue_project, tiered

pytestmark = pytest.mark.spark


def history(spark: Any, path: Any) -> list[str]:
    got = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()
    return [r["operation"] for r in sorted(got, key=lambda r: r["version"])]


def test_keyed_snapshot_export_is_merged_by_key(spark: Any, tmp_project: Any) -> None:
    project = revenue_project(tmp_project, {"format": "delta", "path": "out/revenue", "key": ["tier"],
                                            "mode": "upsert"}, {"in/a.json": tiered(range(6))})
    out = project.root / "out" / "revenue"
    first = run(spark, project)["revenue_export"]
    assert first.ok, first.error
    assert exported(spark, out, "delta") == revenue_by_tier(list(range(6)))
    (project.root / "in" / "b.json").write_text(tiered(range(6, 9)))  # tiers c, d, a change; b does not
    second = run(spark, project)["revenue_export"]
    assert second.ok, second.error
    assert exported(spark, out, "delta") == revenue_by_tier(list(range(9)))  # one row per tier, the latest
    assert history(spark, out) == ["WRITE", "MERGE"]
    from deltalake import DeltaTable  # any engine reads the export

    table = DeltaTable(str(out)).to_pyarrow_table().to_pylist()
    assert {r["tier"]: (r["revenue"], r["orders"]) for r in table} == revenue_by_tier(list(range(9)))


def test_replace_export_is_one_overwrite_commit(spark: Any, tmp_project: Any) -> None:
    project = revenue_project(tmp_project, {"format": "delta", "path": "out/r"}, {"in/a.json": tiered(range(8))})
    assert run(spark, project)["revenue_export"].ok
    (project.root / "in" / "b.json").write_text(tiered(range(8, 10)))
    assert run(spark, project)["revenue_export"].ok
    assert exported(spark, project.root / "out/r", "delta") == revenue_by_tier(list(range(10)))
    assert history(spark, project.root / "out/r") == ["WRITE", "WRITE"]
    old = spark.read.format("delta").option("versionAsOf", 0).load(str(project.root / "out/r")).count()
    assert old == 4  # the previous export stays readable by version


def test_duplicate_keys_fail_before_a_delta_commit(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": TIERS}],
        "models": [
            {"name": "orders", "materialized": "table", "sql": 'SELECT * FROM {{ source("orders_raw") }}'},
            {"name": "by_tier", "from": "orders", "sink": {"format": "delta", "path": "out/o", "key": ["tier"]}},
        ],
    }, {"in/a.json": tiered(range(8))})
    result = run(spark, project)["by_tier"]
    assert not result.ok and "4 row(s) share a key (tier)" in (result.error or ""), result.error
    assert not (project.root / "out" / "o" / "_delta_log").exists(), "nothing was published"


def test_stream_export_skips_a_replayed_batch(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": TIERS}],
        "models": [
            {"name": "orders", "materialized": "stream", "sql": 'SELECT * FROM {{ source("orders_raw") }}'},
            {"name": "export", "from": "orders", "sink": {"format": "delta", "path": "out/d"}},
        ],
    }, {"in/a.json": tiered(range(1, 4))})
    first = run(spark, project)["export"]
    assert first.ok and first.rows_written == 3, first.error
    # a crash after the sink's commit of batch 0 but before Spark recorded it: Spark replays batch 0
    checkpoint = ProjectPaths.from_project(project).checkpoint("export")
    for name in ("0", ".0.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    (project.root / "in" / "b.json").write_text(tiered(range(4, 6)))
    second = run(spark, project)["export"]
    assert second.ok, second.error
    assert (checkpoint / "commits" / "0").is_file(), "Spark replayed batch 0"
    got = sorted(r["order_id"] for r in rows(spark, project.root / "out/d", "delta"))
    assert got == [1, 2, 3, 4, 5], "the replayed batch was not written twice"
    assert not list(checkpoint.glob("_streamt_sink_commits.json")), "Delta keeps the batch ids, not a file of ours"
