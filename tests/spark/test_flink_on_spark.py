"""streamt projects written in Flink SQL run on Spark in local mode (``-e local``: topics are folders):
window results, interval and temporal joins, published topics, all compared with values computed
here in plain Python from the records dropped into ``topics/``."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.api import LoadedProject, load
from dagster_streamt.spark import ModelResult, run_models
from dagster_streamt.spark.storage.warehouse import Warehouse

from ..compat.streamt_data import write_topics
from .helpers import rows

pytestmark = pytest.mark.spark
PROJECTS = Path(__file__).parents[1] / "compat" / "streamt_projects"
FLUSH = datetime(2026, 1, 3)  # an event far past the data: the watermark passes every window of the data


def project(tmp_path: Path, name: str, n: int = 200) -> tuple[Path, dict[str, list[dict[str, Any]]]]:
    root = tmp_path / name
    shutil.copytree(PROJECTS / name, root)
    return root, write_topics(root, name, n)


def run_all(spark: Any, loaded: LoadedProject) -> dict[str, ModelResult]:
    g = loaded.graph
    ids = g.of_type("model")
    order = [i.split(".", 1)[1] for i in g.topological_order(ids)]
    levels = [[i.split(".", 1)[1] for i in lv] for lv in g.execution_levels(ids)]
    ups = {n: {u.split(".", 1)[1] for u in g.upstream_of(f"model.{n}") if u.startswith("model.")} for n in order}
    return {r.model: r for r in run_models(spark, loaded.project, order, levels, ups)}


def stored(spark: Any, loaded: LoadedProject, model: str) -> list[dict[str, Any]]:
    """The rows a model holds now (its current table version, or its stream output)."""
    location = Warehouse(loaded.project.root / ".streamt" / "warehouse").table_location(model)
    assert location is not None, f"{model} stored nothing"
    return rows(spark, location)


def floor(ts: datetime, minutes: int) -> datetime:
    return ts - timedelta(minutes=ts.minute % minutes, seconds=ts.second, microseconds=ts.microsecond)


def test_windowed_aggregations_guide(spark: Any, tmp_path: Path) -> None:
    """streamt's windowed-aggregations guide: TUMBLE (1 hour) and HOP (1 hour every 15 minutes) per
    region over the cleaned orders, with the source's event_time watermark (5 s)."""
    root, records = project(tmp_path, "guide_windowed")
    orders = records["orders.raw.v1"]
    flush = {"order_id": "flush", "customer_id": "c0", "amount": 1.0, "status": "pending", "region": "EU",
             "order_timestamp": FLUSH.isoformat()}
    (root / "topics" / "orders.raw.v1" / "part-1.json").write_text(json.dumps(flush) + "\n")
    loaded = load(root, "local", use_cache=False)
    results = run_all(spark, loaded)
    assert all(r.ok for r in results.values()), {n: r.error for n, r in results.items()}
    clean = [o for o in orders if o["amount"] > 0 and o["status"] in ("pending", "confirmed", "shipped", "delivered")]
    hourly: dict[tuple[str, datetime], list[float]] = defaultdict(list)
    trends: dict[tuple[str, datetime], list[float]] = defaultdict(list)
    for o in clean:
        ts = datetime.fromisoformat(o["order_timestamp"])
        hourly[(o["region"], floor(ts, 60))].append(o["amount"])
        for k in range(4):  # HOP: 1-hour windows starting every 15 minutes
            trends[(o["region"], floor(ts, 15) - timedelta(minutes=15 * k))].append(o["amount"])
    got = {(r["region"], r["window_start"]): (r["order_count"], float(r["total_revenue"]), float(r["min_order"]))
           for r in stored(spark, loaded, "hourly_order_stats")}
    want = {k: (len(v), round(sum(v), 2), min(v)) for k, v in hourly.items()}
    assert {k: (c, round(t, 2), m) for k, (c, t, m) in got.items()} == want
    trend_rows = stored(spark, loaded, "order_trends_15min")
    got_trends = {(r["region"], r["window_start"]): r["order_count"] for r in trend_rows}
    assert got_trends == {k: len(v) for k, v in trends.items()}
    assert results["hourly_order_stats"].topic == "orders.stats.hourly.v1"  # streamt: also written to its topic
    published = [json.loads(line) for f in sorted((root / "topics" / "orders.stats.hourly.v1").glob("*.json"))
                 for line in f.read_text().splitlines()]
    assert len(published) == len(want)


def test_interval_and_temporal_joins_guide(spark: Any, tmp_path: Path) -> None:
    """streamt's stream-joins guide: orders enriched with the customer's current tier (temporal join),
    then matched with the payment made within 24 hours (interval join, left outer)."""
    root, records = project(tmp_path, "guide_joins")
    loaded = load(root, "local", use_cache=False)
    assert loaded.project.inferred["orders_enriched"] == "temporal join; with state"
    results = run_all(spark, loaded)
    assert results["orders_enriched"].ok and results["order_payment_matched"].ok, results
    # the guide's own abandoned_orders selects customer_email and customer_tier, which the model it reads
    # (order_payment_matched) does not output: Flink rejects it too, and Spark says which column
    assert not results["abandoned_orders"].ok and "customer_email" in (results["abandoned_orders"].error or "")
    tiers = {c["id"]: c["tier"] for c in records["customers.cdc.v1"]}
    enriched = {r["order_id"]: r["customer_tier"] for r in stored(spark, loaded, "orders_enriched")}
    assert enriched == {o["order_id"]: tiers.get(o["customer_id"]) for o in records["orders.raw.v1"]}
    orders = {o["order_id"]: datetime.fromisoformat(o["order_timestamp"]) for o in records["orders.raw.v1"]}
    matched = {(p["order_id"], p["payment_id"]) for p in records["payments.raw.v1"]
               if orders[p["order_id"]] <= datetime.fromisoformat(p["payment_timestamp"])
               <= orders[p["order_id"]] + timedelta(hours=24)}
    got = {(r["order_id"], r["payment_id"]) for r in stored(spark, loaded, "order_payment_matched") if r["is_paid"]}
    assert got == matched and matched


def test_payments_example_runs_as_written_and_republishes_only_new_data(spark: Any, tmp_path: Path) -> None:
    """streamt's examples/payments: a `topic` model and a `flink` TUMBLE model over `payments.raw.v1`."""
    root, records = project(tmp_path, "payments_example", 120)
    loaded = load(root, "local", use_cache=False)
    first = run_all(spark, loaded)
    assert all(r.ok for r in first.values())
    clean = [r for r in records["payments.raw.v1"] if r["status"] is not None]
    assert sorted(r["payment_id"] for r in stored(spark, loaded, "payments_clean")) == sorted(
        r["payment_id"] for r in clean)
    topic = root / "topics" / "payments_clean"
    assert sum(len(f.read_text().splitlines()) for f in topic.glob("*.json")) == len(clean) == first[
        "payments_clean"].topic_rows
    later = max(datetime.fromisoformat(r["event_timestamp"]) for r in records["payments.raw.v1"])
    more = [{**r, "payment_id": f"new{i}", "event_timestamp": (later + timedelta(minutes=i + 1)).isoformat()}
            for i, r in enumerate(clean[:10])]  # after the watermark: late events would be dropped, as in Flink
    flush = {**clean[0], "payment_id": "flush", "event_timestamp": FLUSH.isoformat()}
    (root / "topics" / "payments.raw.v1" / "part-1.json").write_text("".join(json.dumps(r) + "\n"
                                                                             for r in [*more, flush]))
    second = run_all(spark, load(root, "local", use_cache=False))
    assert second["payments_clean"].topic_rows == 11  # exactly the new rows, once
    assert sum(len(f.read_text().splitlines()) for f in topic.glob("*.json")) == len(clean) + 11
    balances: dict[tuple[str, datetime], float] = defaultdict(float)
    for r in [*clean, *more]:
        if r["status"] == "CAPTURED":
            end = floor(datetime.fromisoformat(r["event_timestamp"]), 5) + timedelta(minutes=5)
            balances[(r["customer_id"], end)] += r["amount"]
    got = {(r["customer_id"], r["window_end"]): round(r["total_amount"], 2)
           for r in stored(spark, loaded, "customer_balances")}
    assert got == {k: round(v, 2) for k, v in balances.items()}


def test_every_streamt_project_runs_in_local_mode(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The eight projects of the compatibility issue, each on generated records: every model runs."""
    for name in ("KAFKA_BROKERS", "KAFKA_USER", "KAFKA_PASSWORD", "SCHEMA_REGISTRY_URL"):
        monkeypatch.setenv(name, "unused-in-local-mode")
    for name in ("SNOWFLAKE_URL", "SNOWFLAKE_USER", "SNOWFLAKE_KEY", "SNOWFLAKE_PRIVATE_KEY", "S3_BUCKET",
                 "AWS_REGION", "AWS_ACCESS_KEY", "AWS_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)  # connector settings: local mode writes files instead
    for name in ("payments_example", "complete_project", "minimal_project", "docs_quickstart",
                 "docs_first_pipeline", "docs_ecommerce", "docs_iot", "docs_payments"):
        root, _ = project(tmp_path, name, 60)
        loaded = load(root, "local", use_cache=False)
        assert not loaded.errors, [d.format() for d in loaded.errors]
        results = run_all(spark, loaded)
        assert all(r.ok for r in results.values()), (name, {n: r.error for n, r in results.items() if not r.ok})
        assert len(results) == len(loaded.project.models)
        for sink in (n for n, m in loaded.project.models.items() if m.materialized == "sink"):
            assert (root / "topics" / "_connect" / sink).exists()  # a connector sink writes local files
