"""``advanced.spark.trigger: real_time`` (Spark's Real-time Mode in ``streamt run --continuous``): parsed in
the spec, and a model Real-time Mode cannot run is a located STR046 at
load time. Pure Python: no Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.api import load
from dagster_streamt.spec.model import SparkAdvanced, real_time_interval

from ..helpers import write_project

ROOT = """\
project:
  name: t
runtime:
  kafka:
    bootstrap_servers: 127.0.0.1:9
sources:
  - name: orders
    topic: orders.raw
    columns:
      - {name: order_id, type: STRING}
      - {name: amount, type: DOUBLE}
"""


@pytest.mark.parametrize(("trigger", "interval"), [
    ("real_time", "5 minutes"), ("REAL-TIME", "5 minutes"), ("real_time 30 seconds", "30 seconds"),
    ("real_time: 1 minute", "1 minute"), ("available_now", None), ("10 seconds", None), (None, None)])
def test_real_time_interval(trigger: str | None, interval: str | None) -> None:
    assert real_time_interval(trigger) == interval
    assert SparkAdvanced(trigger=trigger).real_time == interval


def test_a_malformed_real_time_interval_fails_in_the_spec() -> None:
    with pytest.raises(ValueError, match="real_time takes a checkpoint interval"):
        SparkAdvanced(trigger="real_time soon")


def _model(name: str, sql: str, trigger: str = "real_time", materialized: str = "stream") -> str:
    return (f"  - name: {name}\n    materialized: {materialized}\n    advanced:\n      spark:\n"
            f"        trigger: {trigger}\n    sql: {sql}\n")


def _str046(root: Path) -> dict[str, tuple[int, str]]:
    return {d.message.split("'")[1]: (d.line, d.message) for d in load(root, use_cache=False).diagnostics
            if d.code == "STR046"}


def test_models_real_time_mode_cannot_run_are_located_errors(tmp_path: Path) -> None:
    models = "models:\n" + "".join([
        _model("big", "SELECT order_id, amount FROM {{ source('orders') }} WHERE amount > 100"),
        _model("totals", "SELECT order_id, SUM(amount) AS total FROM {{ source('orders') }} GROUP BY order_id"),
        _model("dedup", "SELECT DISTINCT order_id FROM {{ source('orders') }}"),
        _model("downstream", "SELECT order_id FROM {{ ref('big') }}"),
        _model("snapshot", "SELECT order_id FROM {{ source('orders') }}", materialized="table"),
        _model("paced", "SELECT order_id FROM {{ source('orders') }}", trigger="10 seconds"),
    ])
    root = write_project(tmp_path / "p", {"stream_project.yml": ROOT + models})
    found = _str046(root)
    assert sorted(found) == ["dedup", "downstream", "snapshot", "totals"]
    assert "stateless queries only" in found["totals"][1] and "aggregation" in found["totals"][1]
    assert "DISTINCT" in found["dedup"][1]
    assert "stream model big" in found["downstream"][1] and "Kafka sources only" in found["downstream"][1]
    assert "stream models" in found["snapshot"][1]
    lines = (root / "stream_project.yml").read_text().splitlines()
    assert all("trigger: real_time" in lines[line - 1] for line, _ in found.values())


def test_real_time_needs_a_broker(tmp_path: Path) -> None:
    local = ROOT.replace("bootstrap_servers: 127.0.0.1:9", "local_dir: topics")
    root = write_project(tmp_path / "p", {"stream_project.yml": local + "models:\n" + _model(
        "big", "SELECT order_id FROM {{ source('orders') }} WHERE amount > 100")})
    assert "not to local topic folders" in _str046(root)["big"][1]
