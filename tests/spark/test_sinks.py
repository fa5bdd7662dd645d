"""Sinks write a model's rows to external files, batch or streaming, without duplicates on replay."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import ProjectPaths

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
