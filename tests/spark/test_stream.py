"""Stream models: each run processes exactly the new data, chains through upstream streams, and
aggregates event-time windows once the watermark passes them."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import Warehouse

from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"},
           {"name": "ts", "type": "timestamp"}]


def orders(ids: range, minute0: int = 0) -> str:
    return jsonl({"order_id": i, "amount": float(i), "ts": f"2024-01-01T00:{minute0 + k:02d}:00Z"}
                 for k, i in enumerate(ids))


def stream_project(tmp_project: Any, models: list[dict[str, Any]], files: dict[str, str],
                   event_time: dict[str, str] | None = None) -> Any:
    source: dict[str, Any] = {"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS}
    if event_time:
        source["event_time"] = event_time
    return tmp_project({"sources": [source], "models": models}, files)


CLEAN = {"name": "orders_clean", "materialized": "stream",
         "sql": 'SELECT order_id, amount, ts FROM {{ source("orders_raw") }} WHERE amount > 1'}


def test_only_new_files_are_processed(spark: Any, tmp_project: Any) -> None:
    project = stream_project(tmp_project, [CLEAN], {"landing/a.json": orders(range(1, 6))})
    first = run(spark, project)["orders_clean"]
    assert first.ok, first.error
    assert (first.input_rows, first.rows_written, first.batches) == (5, 4, 1)
    assert first.processed_rows_per_second is not None

    again = run(spark, project)["orders_clean"]
    assert (again.input_rows, again.rows_written, again.batches) == (0, 0, 0)

    (project.root / "landing" / "b.json").write_text(orders(range(6, 9), 10))
    third = run(spark, project)["orders_clean"]
    assert (third.input_rows, third.rows_written) == (3, 3)
    data = Warehouse.for_project(project).table_location("orders_clean")
    assert data is not None and data.name == "data" and (data / "_delta_log").is_dir()  # Delta's streaming sink
    ids = [r["order_id"] for r in rows(spark, data)]
    assert sorted(ids) == list(range(2, 9)), "every row exactly once"


def test_stream_reads_upstream_stream_model(spark: Any, tmp_project: Any) -> None:
    enriched = {"name": "orders_enriched", "materialized": "stream",
                "sql": 'SELECT order_id, amount * 2 AS doubled FROM {{ ref("orders_clean") }}'}
    project = stream_project(tmp_project, [CLEAN, enriched], {"landing/a.json": orders(range(1, 4))})
    results = run(spark, project)
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    assert results["orders_enriched"].input_rows == 2
    assert "-- orders_clean (model): read as a stream" in results["orders_enriched"].sql  # named as in the project

    (project.root / "landing" / "b.json").write_text(orders(range(4, 6), 10))
    second = run(spark, project)
    assert second["orders_enriched"].input_rows == 2  # only the two rows orders_clean just appended
    out = rows(spark, Warehouse.for_project(project).table_location("orders_enriched"))
    assert sorted(r["doubled"] for r in out) == [4.0, 6.0, 8.0, 10.0]


def test_watermark_window_aggregation(spark: Any, tmp_project: Any) -> None:
    per_window = {
        "name": "orders_per_5min", "materialized": "stream",
        "sql": ('SELECT window.start AS window_start, count(*) AS orders, sum(amount) AS amount '
                'FROM {{ source("orders_raw") }} GROUP BY window(ts, "5 minutes")'),
    }
    project = stream_project(tmp_project, [per_window], {"landing/a.json": orders(range(1, 8))},
                             event_time={"column": "ts", "watermark": "10 minutes"})
    first = run(spark, project)["orders_per_5min"]
    assert first.ok, first.error
    # 00:00-00:06 seen; the watermark (max ts - 10 min) closes no window yet: append mode emits nothing.
    location = Warehouse.for_project(project).table_location("orders_per_5min")
    assert rows(spark, location) == []

    (project.root / "landing" / "b.json").write_text(orders(range(100, 101), 30))  # an event at 00:30
    second = run(spark, project)["orders_per_5min"]
    assert second.ok, second.error
    assert second.last_watermark is not None and second.last_watermark.startswith("2024-01-01T00:20")
    got = sorted((str(r["window_start"]), r["orders"]) for r in rows(spark, location))
    assert got == [("2024-01-01 00:00:00", 5), ("2024-01-01 00:05:00", 2)]


def test_complete_mode_with_its_own_shuffle_partitions(spark: Any, tmp_project: Any) -> None:
    totals = {"name": "totals", "materialized": "stream",
              "advanced": {"spark": {"output_mode": "complete", "shuffle_partitions": 3}},
              "sql": 'SELECT count(*) AS orders, sum(amount) AS amount FROM {{ source("orders_raw") }}'}
    report = {"name": "report", "materialized": "table", "sql": 'SELECT orders * 10 AS x FROM {{ ref("totals") }}'}
    project = stream_project(tmp_project, [totals, report], {"landing/a.json": orders(range(1, 4))})
    shared = spark.conf.get("spark.sql.shuffle.partitions")  # whatever earlier tests left (not 3)
    assert shared != "3"
    first = run(spark, project)
    assert all(r.ok for r in first.values()), [r.error for r in first.values()]
    wh = Warehouse.for_project(project)
    assert rows(spark, wh.table_location("totals")) == [{"orders": 3, "amount": 6.0}]

    (project.root / "landing" / "b.json").write_text(orders(range(4, 6), 10))
    second = run(spark, project)
    location = wh.table_location("totals")
    assert location is not None and location == wh.data_dir("totals") and second["totals"].delta_version == 1
    assert rows(spark, location) == [{"orders": 5, "amount": 15.0}]  # the whole result, replaced: one commit
    earlier = spark.read.format("delta").option("versionAsOf", 0).load(str(location)).collect()
    assert [r.asDict() for r in earlier] == [{"orders": 3, "amount": 6.0}]
    assert rows(spark, wh.table_location("report")) == [{"x": 50}] and second["report"].ok
    offsets = (project.root / ".streamt/checkpoints/totals/offsets/0").read_text()
    assert '"spark.sql.shuffle.partitions":"3"' in offsets  # the model's own setting ...
    assert spark.conf.get("spark.sql.shuffle.partitions") == shared  # ... not leaked into the shared session


def test_bad_trigger_and_batch_only_stream_are_explained(spark: Any, tmp_project: Any) -> None:
    project = stream_project(tmp_project, [
        {**CLEAN, "advanced": {"spark": {"trigger": "whenever"}}},
        {"name": "static", "materialized": "stream", "sql": "SELECT 1 AS one"},
    ], {"landing/a.json": orders(range(1, 2))})
    results = run(spark, project)
    assert "unknown advanced.spark.trigger 'whenever'" in results["orders_clean"].error
    assert "reads no streaming input" in results["static"].error


def test_live_board_follows_a_running_stream(spark: Any, tmp_project: Any) -> None:
    """While someone watches (``streamt run`` on a terminal), a stream reports rows and batches so far."""
    import threading

    from dagster_streamt.spark.run import live

    source = {"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS,
              "options": {"maxFilesPerTrigger": "1"}}
    files = {f"landing/{k}.json": orders(range(10 * k + 1, 10 * k + 11)) for k in range(8)}
    project = tmp_project({"sources": [source], "models": [CLEAN]}, files)
    seen: list[live.Running] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            seen.extend(live.snapshot())

    sampler = threading.Thread(target=sample)
    with live.watch():
        sampler.start()
        try:
            result = run(spark, project)["orders_clean"]
        finally:
            stop.set()
            sampler.join()
    assert result.ok and result.batches == 8 and result.input_rows == 80, result.error
    assert seen and {r.model for r in seen} == {"orders_clean"} and seen[0].kind == "stream"
    counted = [r for r in seen if r.batches]
    assert counted, "no progress was recorded while the stream ran"
    assert all(0 < r.rows <= 80 and r.rows == 10 * r.batches for r in counted if r.rows is not None)
    assert live.snapshot() == []  # nothing left in flight
