"""Kafka's record metadata in SQL on a real broker: ``_kafka_key``, ``_kafka_partition``, ``_kafka_offset``,
``_kafka_timestamp`` and ``_kafka_headers`` beside the parsed JSON columns, exactly as produced; a source with
``value.format: raw`` reads each value as one string column ``value``; the Kafka timestamp as a source's
``event_time`` carries its declared watermark into a window."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer

from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker

from ..conftest import StreamtHere
from ..helpers import write_project

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

PROJECT = """\
project:
  name: kmeta
runtime:
  kafka:
    bootstrap_servers: {servers}
sources:
  - name: orders
    topic: {orders}
    columns:
      - {{name: order_id, type: bigint}}
      - {{name: amount, type: double}}
  - name: lines
    topic: {lines}
    options:
      value.format: raw
    event_time:
      column: _kafka_timestamp
      watermark:
        max_out_of_orderness_ms: 10000
models:
  - name: orders_meta
    materialized: stream
    advanced:
      topic:
        name: {orders_out}
    sql: |
      SELECT order_id, amount, _kafka_key AS k, _kafka_partition AS p, _kafka_offset AS o,
             _kafka_timestamp AS ts, CAST(_kafka_headers[0].value AS STRING) AS trace
      FROM {{{{ source("orders") }}}}
  - name: lines_copy
    materialized: stream
    advanced:
      topic:
        name: {lines_out}
    sql: SELECT value, _kafka_offset AS o, _kafka_timestamp AS ts FROM {{{{ source("lines") }}}}
  - name: lines_per_minute
    materialized: stream
    advanced:
      topic:
        name: {counts_out}
    sql: |
      SELECT TUMBLE_START(_kafka_timestamp, INTERVAL '1' MINUTE) AS minute, COUNT(*) AS n
      FROM {{{{ source("lines") }}}}
      GROUP BY TUMBLE(_kafka_timestamp, INTERVAL '1' MINUTE)
"""


def produce(servers: str, topic: str, records: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Send each ``{key, value, ts, headers}`` in order; return each record's (partition, offset)."""
    placed: dict[int, tuple[int, int]] = {}
    producer = Producer({"bootstrap.servers": servers, "enable.idempotence": True})
    for i, rec in enumerate(records):
        def delivered(err: Any, msg: Any, i: int = i) -> None:
            assert err is None, err
            placed[i] = (msg.partition(), msg.offset())

        producer.produce(topic, value=rec["value"], key=rec.get("key"), headers=rec.get("headers"),
                         timestamp=int(rec["ts"].timestamp() * 1000), on_delivery=delivered)
        producer.flush(30)  # one at a time: offsets in produce order
    return [placed[i] for i in range(len(records))]


def table(root: Path, model: str) -> list[dict[str, Any]]:
    return pq.read_table(root / ".streamt" / "warehouse" / model / "data").to_pylist()


def test_kafka_metadata_raw_values_and_event_time(kafka_broker: KafkaBroker, tmp_path: Path,
                                                  streamt_here: StreamtHere) -> None:
    servers = kafka_broker.bootstrap_servers
    tag = uuid.uuid4().hex[:8]
    topics = {name: f"{name}.{tag}" for name in ("orders", "lines", "orders_out", "lines_out", "counts_out")}
    admin.create_topic(servers, topics["orders"], partitions=2)
    admin.create_topic(servers, topics["lines"], partitions=1)
    orders = [{"key": f"k{i}", "value": json.dumps({"order_id": i, "amount": i * 1.5}),
               "ts": T0 + timedelta(seconds=i), "headers": [("trace", f"t-{i}".encode())]} for i in range(6)]
    placed = produce(servers, topics["orders"], orders)
    assert {p for p, _ in placed} == {0, 1}, placed  # the keys spread over both partitions
    # lines at 0, 1, 2 s (window 12:00), 61 s (12:01) and 127 s (12:02): with the declared 10 s bound the
    # watermark ends at 117 s, which closes 12:00 but not 12:01 (streamt's default 5 s would close it)
    offsets = [0, 1, 2, 61, 127]
    lines = [{"value": f"line {s} ünïcode", "ts": T0 + timedelta(seconds=s)} for s in offsets]
    produce(servers, topics["lines"], lines)

    root = write_project(tmp_path / "kmeta", {"stream_project.yml": PROJECT.format(servers=servers, **topics)})
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    r = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert r.returncode == 0, r.stdout + r.stderr

    got = sorted(table(root, "orders_meta"), key=lambda row: row["order_id"])
    assert [(g["order_id"], g["amount"], g["k"], g["p"], g["o"], g["trace"]) for g in got] == [
        (i, i * 1.5, f"k{i}", placed[i][0], placed[i][1], f"t-{i}") for i in range(6)]
    assert [g["ts"].replace(tzinfo=UTC) if g["ts"].tzinfo is None else g["ts"] for g in got] == [
        o["ts"] for o in orders]

    copied = sorted(table(root, "lines_copy"), key=lambda row: row["o"])
    assert [(c["value"], c["o"]) for c in copied] == [(f"line {s} ünïcode", i) for i, s in enumerate(offsets)]

    counts = table(root, "lines_per_minute")
    assert [(c["minute"].replace(tzinfo=UTC) if c["minute"].tzinfo is None else c["minute"], c["n"])
            for c in counts] == [(T0, 3)]
