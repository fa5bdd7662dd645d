"""`streamt observe`'s verdict per stream model, from reports in a Dagster instance (no JVM): ok, lagging when a
batch outlasts its trigger, stalled when Kafka records wait and no batch came for ten triggers, failed,
never run; and the CLI's exit code and JSON on a project with no report."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import dagster as dg

from dagster_streamt import build_definitions, load
from dagster_streamt.core import metadata as meta
from dagster_streamt.dagster.key_map import KeyMap
from dagster_streamt.dagster.stream_health import stream_health

from ..helpers import streamt

ROOT = Path(__file__).parents[2]


def _report(instance: dg.DagsterInstance, model: str, **md: Any) -> None:
    base = {meta.MODE: meta.CONTINUOUS, meta.STATUS: "running", "trigger": "5 seconds"}
    instance.report_runless_asset_event(dg.AssetObservation(asset_key=dg.AssetKey(model), metadata={**base, **md}))


def test_health_from_the_last_reports() -> None:
    loaded = load(ROOT / "project")
    keys = KeyMap.from_definitions(build_definitions(ROOT / "project", loaded=loaded), "shop")
    assert keys is not None
    with dg.DagsterInstance.ephemeral() as instance:
        assert {h.model: h.health for h in stream_health(loaded, instance, keys)} == {
            "order_metrics": "never run", "orders_clean": "never run"}
        _report(instance, "orders_clean", new_batches=2, batch_id=7, batch_duration_s=1.5, kafka_offsets_behind=40,
                lag_s=12.0)
        now = time.time()
        h = {x.model: x for x in stream_health(loaded, instance, keys, now + 1)}["orders_clean"]
        assert (h.health, h.state, h.last_batch_id, h.keeping_up, h.kafka_offsets_behind) == ("ok", "running", 7,
                                                                                               True, 40)
        assert h.watermark_lag_s is not None and 12.5 < h.watermark_lag_s < 15  # as old as the report, plus its lag
        # records wait (40 behind) and no batch for 100 s, ten 5-second triggers: stalled
        assert stream_health(loaded, instance, keys, now + 100)[1].health == "stalled"
        _report(instance, "orders_clean", new_batches=1, batch_id=8, batch_duration_s=7.0)
        assert stream_health(loaded, instance, keys)[1].health == "lagging"  # 7 s batches, 5 s trigger
        _report(instance, "order_metrics", **{meta.STATUS: "failed", "error": "model order_metrics: boom"})
        failed = stream_health(loaded, instance, keys)[0]
        assert (failed.health, failed.error) == ("failed", "model order_metrics: boom")


def test_observe_cli_without_reports(tmp_path: Path) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(ROOT / "project", shop, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    done = streamt("observe", "-p", str(shop), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert [(s["model"], s["health"]) for s in json.loads(done.stdout)["streams"]] == [
        ("order_metrics", "never run"), ("orders_clean", "never run")]
