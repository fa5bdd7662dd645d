"""``advanced.spark.trigger: real_time`` on a real broker: ``streamt run --continuous`` (a separate process,
stopped with SIGINT) runs a filter model in Spark's Real-time Mode from a Kafka source straight to its
topic; records produced while it runs are published without waiting for a micro-batch, and the topic holds
exactly the filtered records (read back with a plain consumer). A micro-batch model beside it publishes its
topic while it runs too (a second query following its stored output), each record once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.api import load
from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker
from dagster_streamt.kafka.lag import project_lag

from .topics import read_topic

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

PROJECT = """\
project:
  name: realtime
runtime:
  kafka:
    bootstrap_servers: {servers}
sources:
  - name: orders
    topic: orders.raw
    columns:
      - {{name: order_id, type: STRING}}
      - {{name: amount, type: DOUBLE}}
models:
  - name: big_orders
    materialized: stream
    advanced:
      spark:
        trigger: real_time 30 seconds
    sql: |
      SELECT order_id, amount FROM {{{{ source("orders") }}}} WHERE amount > 100
  - name: small_orders
    materialized: stream
    advanced:
      spark:
        trigger: 1 second
    sql: |
      SELECT order_id, amount FROM {{{{ source("orders") }}}} WHERE amount <= 100
"""


def orders(start: int, count: int) -> list[dict[str, Any]]:
    return [{"order_id": f"o{i:04d}", "amount": float(37 * i % 250)} for i in range(start, start + count)]


def small(records: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True) for r in records if r["amount"] <= 100)


def big(records: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True) for r in records if r["amount"] > 100)


def wait_for(servers: str, topic: str, want: Counter[str], proc: subprocess.Popen[str], timeout: float) -> Counter[str]:
    deadline = time.monotonic() + timeout
    got: Counter[str] = Counter()
    while time.monotonic() < deadline and proc.poll() is None:
        ready = topic in admin.list_topics(servers) and sum(admin.end_offsets(servers, topic).values()) >= want.total()
        if ready:
            got = Counter(json.dumps(r, sort_keys=True) for r in read_topic(servers, topic))
            if got == want:
                return got
        time.sleep(0.5)
    return got


def test_a_filter_model_runs_in_real_time_mode(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    servers = kafka_broker.bootstrap_servers
    admin.create_topic(servers, "orders.raw", partitions=1)
    first = orders(0, 40)
    admin.produce(servers, "orders.raw", [(r["order_id"], json.dumps(r)) for r in first])
    root = tmp_path / "project"
    root.mkdir()
    (root / "stream_project.yml").write_text(PROJECT.format(servers=servers), encoding="utf-8")
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    log = tmp_path / "continuous.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root), "--continuous"],
                                env={**os.environ, "DAGSTER_HOME": str(home)}, stdout=out, stderr=subprocess.STDOUT,
                                text=True)
        try:
            assert wait_for(servers, "big_orders", big(first), proc, 300) == big(first), log.read_text()
            second = orders(40, 40)  # while the query runs: published as they arrive
            sent = time.monotonic()
            admin.produce(servers, "orders.raw", [(r["order_id"], json.dumps(r)) for r in second])
            assert wait_for(servers, "big_orders", big(first + second), proc, 60) == big(first + second), \
                log.read_text()
            assert time.monotonic() - sent < 20  # well within the 30 s checkpoint interval: not batch-bound
            # the micro-batch model beside it publishes its topic as it goes too, each record once
            assert wait_for(servers, "small_orders", small(first + second), proc, 120) == small(first + second), \
                log.read_text()
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    text = log.read_text()
    assert "real-time mode" in text, text
    assert proc.returncode == 0, text
    assert Counter(json.dumps(r, sort_keys=True) for r in read_topic(servers, "small_orders")) == \
        small(first + second)  # stopping published nothing twice
    # `streamt status --lag` counts the real-time query's own checkpoint beside the micro-batch model's
    (lag,) = project_lag(load(root))
    readers = {r.reader: r for r in lag.readers}
    assert readers["small_orders"].total == 0
    # a real-time query commits once per checkpoint interval (30 s here): its own checkpoint is listed
    assert "big_orders (real-time)" in readers and readers["big_orders (real-time)"].checkpoint.endswith("__realtime")
    assert not (root / "target").exists() or not any((root / "target").glob("**/big_orders/data/*.parquet"))


def test_one_shot_runs_keep_available_now_and_continuous_mode_gets_real_time(spark: Any) -> None:
    from dagster_streamt.spark.errors import ModelRunError
    from dagster_streamt.spark.run.progress import trigger_options
    from dagster_streamt.spark.streams.continuous import continuous_trigger, describe_trigger

    assert trigger_options("real_time", "m") == {"availableNow": True}  # `streamt run`: process what is there
    assert trigger_options("real_time 1 minute", "m", real_time=True) == {"realTime": "1 minute"}
    assert continuous_trigger("real_time", "m") == {"realTime": "5 minutes"}
    assert continuous_trigger("20 seconds", "m") == {"processingTime": "20 seconds"}
    assert describe_trigger({"realTime": "5 minutes"}) == "real-time mode (checkpoint every 5 minutes)"
    with pytest.raises(ModelRunError, match="real_time"):
        trigger_options("sometimes", "m")
