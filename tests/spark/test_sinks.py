"""Sinks write a model's rows to external files, batch or streaming, without duplicates on replay."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import ProjectPaths
from dagster_streamt.spark.sinks.export_files import versions_dir

from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]


def orders(ids: range) -> str:
    return jsonl({"order_id": i, "amount": i * 1.5} for i in ids)


def test_batch_sinks_to_parquet_and_csv(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": COLUMNS}],
        "models": [
            {"name": "orders", "materialized": "table", "sql": 'SELECT * FROM {{ source("orders_raw") }}'},
            {"name": "to_parquet", "from": "orders", "sink": {"format": "parquet", "path": "out/parquet"}},
            {"name": "to_csv", "materialized": "sink", "sql": 'SELECT order_id FROM {{ ref("orders") }}',
             "sink": {"format": "csv", "path": "out/csv", "mode": "overwrite"}},
        ],
    }, {"in/a.json": orders(range(1, 4))})
    results = run(spark, project)
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    assert results["to_parquet"].rows_written == 3
    assert results["to_parquet"].location == str(project.root / "out" / "parquet")
    assert sorted(r["order_id"] for r in rows(spark, project.root / "out/parquet")) == [1, 2, 3]
    csv = rows(spark, project.root / "out/csv", "csv", header="true")
    assert sorted(r["order_id"] for r in csv) == ["1", "2", "3"]

    run(spark, project, ["to_csv"])  # overwrite mode: same content again
    assert len(rows(spark, project.root / "out/csv", "csv", header="true")) == 3


def test_streaming_sink_is_idempotent_per_batch(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": COLUMNS}],
        "models": [
            {"name": "orders", "materialized": "stream", "sql": 'SELECT * FROM {{ source("orders_raw") }}'},
            {"name": "export", "from": "orders", "sink": {"format": "json", "path": "out/json"}},
        ],
    }, {"in/a.json": orders(range(1, 4))})
    first = run(spark, project)
    assert first["export"].ok, first["export"].error
    assert (first["export"].rows_written, first["export"].batches) == (3, 1)

    # Simulate a crash after the sink wrote batch 0 but before Spark committed it: Spark replays it.
    checkpoint = ProjectPaths.from_project(project).checkpoint("export")
    for name in ("0", ".0.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    (project.root / "in" / "b.json").write_text(orders(range(4, 6)))
    second = run(spark, project)
    assert second["export"].ok, second["export"].error
    assert (checkpoint / "commits" / "0").is_file(), "Spark replayed batch 0"
    out = sorted(r["order_id"] for r in rows(spark, project.root / "out/json", "json"))
    assert out == [1, 2, 3, 4, 5], "the replayed batch was not written twice"


# -- snapshot sinks replace, atomically -----------------------------------------------------------------
TIERS = [{"name": "order_id", "type": "bigint"}, {"name": "tier", "type": "string"},
         {"name": "amount", "type": "double"}]


def tiered(ids: range, bump: float = 0.0) -> str:
    return jsonl({"order_id": i, "tier": "abcd"[i % 4], "amount": i + bump} for i in ids)


def revenue_by_tier(ids: list[int], bump: float = 0.0) -> dict[str, tuple[float, int]]:
    """The expected export, computed in plain Python."""
    out: dict[str, tuple[float, int]] = {}
    for i in ids:
        total, n = out.get("abcd"[i % 4], (0.0, 0))
        out["abcd"[i % 4]] = (total + i + bump, n + 1)
    return out


def exported(spark: Any, path: Path, fmt: str = "json") -> dict[str, tuple[float, int]]:
    got = rows(spark, path, fmt)
    assert len(got) == len({r["tier"] for r in got}), f"a tier appears twice: {got}"
    return {r["tier"]: (r["revenue"], r["orders"]) for r in got}


def revenue_project(tmp_project: Any, sink: dict[str, Any], files: dict[str, str]) -> Any:
    return tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": TIERS}],
        "models": [
            {"name": "revenue", "materialized": "table",
             "sql": 'SELECT tier, sum(amount) AS revenue, count(*) AS orders FROM {{ source("orders_raw") }} '
                    "GROUP BY tier"},
            {"name": "revenue_export", "from": "revenue", "sink": sink},
        ],
    }, files)


def test_snapshot_sink_replaces_export_on_every_run(spark: Any, tmp_project: Any) -> None:
    project = revenue_project(tmp_project, {"format": "json", "path": "out/revenue"}, {"in/a.json": tiered(range(8))})
    out = project.root / "out" / "revenue"
    first = run(spark, project)["revenue_export"]
    assert first.ok and first.rows_written == 4, first.error
    assert exported(spark, out) == revenue_by_tier(list(range(8)))
    (project.root / "in" / "b.json").write_text(tiered(range(8, 12)))
    second = run(spark, project)["revenue_export"]
    assert second.ok and second.rows_written == 4, second.error
    assert exported(spark, out) == revenue_by_tier(list(range(12))), "the new snapshot replaced the old one"
    # the path readers open is a symlink to a complete version; the previous one is kept for running readers
    assert out.is_symlink()
    versions = sorted(p.name for p in versions_dir(out).glob("v=*"))
    assert len(versions) == 2 and os.path.basename(os.readlink(out)) in versions
    assert (out / "_SUCCESS").is_file()


def test_append_mode_keeps_each_runs_snapshot(spark: Any, tmp_project: Any) -> None:
    project = revenue_project(tmp_project, {"format": "parquet", "path": "out/history", "mode": "append"},
                              {"in/a.json": tiered(range(8))})
    run(spark, project)
    run(spark, project)
    got = rows(spark, project.root / "out" / "history")
    assert len(got) == 8 and sorted({r["tier"] for r in got}) == ["a", "b", "c", "d"]


def test_legacy_export_folder_is_adopted_then_replaced(spark: Any, tmp_project: Any) -> None:
    """An export written by an older version (a plain folder that an append run doubled) is replaced."""
    project = revenue_project(tmp_project, {"format": "json", "path": "out/revenue", "mode": "overwrite"},
                              {"in/a.json": tiered(range(8))})
    stale = project.root / "out" / "revenue"
    stale.mkdir(parents=True)
    (stale / "part-old.json").write_text(jsonl([{"tier": "a", "revenue": 1.0, "orders": 1}] * 2))
    assert run(spark, project)["revenue_export"].ok
    assert exported(spark, stale) == revenue_by_tier(list(range(8)))


def test_reader_sees_a_whole_export_during_runs(spark: Any, tmp_project: Any) -> None:
    """A reader polling the export path while the sink republishes sees complete versions only."""
    project = revenue_project(tmp_project, {"format": "json", "path": "out/revenue"}, {"in/a.json": tiered(range(8))})
    out = project.root / "out" / "revenue"
    assert run(spark, project)["revenue_export"].ok
    expected = [revenue_by_tier(list(range(8)))]
    seen: list[dict[str, tuple[float, int]]] = []
    misses = [0]
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                names = [n for n in os.listdir(out) if n.endswith(".json")]  # through the symlink, as a tool would
                recs = [json.loads(line) for n in names for line in (out / n).read_text().splitlines() if line]
            except FileNotFoundError:
                misses[0] += 1  # listed one version, opened after the swap: an error, never mixed data
                continue
            seen.append({r["tier"]: (r["revenue"], r["orders"]) for r in recs})
            assert len(recs) == len(seen[-1]), f"a tier twice: {recs}"

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for k in range(1, 4):
            (project.root / "in" / f"more{k}.json").write_text(tiered(range(8 * k, 8 * k + 8)))
            assert run(spark, project)["revenue_export"].ok
            expected.append(revenue_by_tier(list(range(8 * k + 8))))
    finally:
        stop.set()
        reader.join()
    assert seen and all(s in expected for s in seen), [s for s in seen if s not in expected][:2]


# -- keys --------------------------------------------------------------------------------------------------
def test_streaming_aggregate_upserted_by_key_into_files(spark: Any, tmp_project: Any) -> None:
    """An update-mode aggregate over a stream (changing counts) exported by key: one row per tier."""
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": TIERS}],
        "models": [
            {"name": "orders", "materialized": "stream", "sql": 'SELECT * FROM {{ source("orders_raw") }}'},
            {"name": "tier_counts", "materialized": "sink", "key": "tier",
             "sql": 'SELECT tier, sum(amount) AS revenue, count(*) AS orders FROM {{ ref("orders") }} GROUP BY tier',
             "sink": {"format": "parquet", "path": "out/counts"}},
        ],
    }, {"in/a.json": tiered(range(6))})
    first = run(spark, project)["tier_counts"]
    assert first.ok, first.error
    assert exported(spark, project.root / "out/counts", "parquet") == revenue_by_tier(list(range(6)))
    (project.root / "in" / "b.json").write_text(tiered(range(6, 9)))  # tiers c, d, a change; b does not
    second = run(spark, project)["tier_counts"]
    assert second.ok, second.error
    assert exported(spark, project.root / "out/counts", "parquet") == revenue_by_tier(list(range(9)))


def test_key_missing_from_output_names_file_and_line(spark: Any, tmp_project: Any) -> None:
    project = revenue_project(tmp_project, {"format": "json", "path": "out/r", "key": ["tier_id"]},
                              {"in/a.json": tiered(range(4))})
    result = run(spark, project)["revenue_export"]
    assert not result.ok
    file, line = project.where("model", "revenue_export", "sink", "key")
    assert line > 0 and f"{file}:{line}" in (result.error or ""), result.error
    assert "tier_id" in (result.error or "") and "revenue, orders" in (result.error or "")


def test_duplicate_keys_fail_before_publishing(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": TIERS}],
        "models": [
            {"name": "orders", "materialized": "table", "sql": 'SELECT * FROM {{ source("orders_raw") }}'},
            {"name": "by_tier", "from": "orders", "sink": {"format": "json", "path": "out/o", "key": ["tier"]}},
            {"name": "by_id", "from": "orders", "sink": {"format": "json", "path": "out/i", "key": "order_id"}},
        ],
    }, {"in/a.json": tiered(range(8))})
    results = run(spark, project)
    assert results["by_id"].ok and len(rows(spark, project.root / "out/i", "json")) == 8
    assert not results["by_tier"].ok
    assert "4 row(s) share a key (tier)" in (results["by_tier"].error or ""), results["by_tier"].error
    assert not (project.root / "out" / "o").exists(), "nothing was published"


def test_sink_of_partitioned_table_exports_every_current_partition(spark: Any, tmp_project: Any) -> None:
    """A partitioned table replaces only the partitions a run writes; its sink always exports the table's
    current rows, whichever partitions the last runs touched."""
    from dagster_streamt.spark import run_models
    from dagster_streamt.spark.run.partitions import PartitionScope, signature
    from dagster_streamt.spec.models import PartitionedBy

    pb = {"column": "tier", "values": ["a", "b", "c", "d"]}
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": TIERS}],
        "models": [
            {"name": "by_tier", "materialized": "table", "partitioned_by": pb,
             "sql": 'SELECT tier, sum(amount) AS revenue, count(*) AS orders FROM {{ source("orders_raw") }} '
                    "WHERE tier IN {{ partition_keys }} GROUP BY tier"},
            {"name": "export", "from": "by_tier", "sink": {"format": "json", "path": "out/t"}},
        ],
    }, {"in/a.json": tiered(range(8))})

    def backfill(keys: tuple[str, ...]) -> None:
        scope = PartitionScope(keys, signature(PartitionedBy(**pb)))
        assert all(r.ok for r in run_models(spark, project, ["by_tier"], [["by_tier"]], {"by_tier": set()},
                                            partition=scope))

    backfill(("a", "b"))
    assert run(spark, project, ["export"])["export"].ok
    assert exported(spark, project.root / "out/t") == {t: v for t, v in revenue_by_tier(list(range(8))).items()
                                                      if t in "ab"}
    (project.root / "in" / "b.json").write_text(tiered(range(8, 16)))
    backfill(("b", "c"))  # a keeps its old values; b is replaced; c is new
    assert run(spark, project, ["export"])["export"].ok
    old, new = revenue_by_tier(list(range(8))), revenue_by_tier(list(range(16)))
    assert exported(spark, project.root / "out/t") == {"a": old["a"], "b": new["b"], "c": new["c"]}
