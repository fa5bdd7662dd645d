"""A Kafka source on a real broker: a malformed value is quarantined with its topic/partition/offset and
counted (never dropped silently), the valid records all reach the model's topic, keyed by the model's
``key:``, on a topic created with its declared partitions and ``advanced.topic.config``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from deltalake import DeltaTable

from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker

from ..conftest import StreamtHere
from ..helpers import write_project
from .topics import read_messages

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

PROJECT = """\
project:
  name: kq
runtime:
  kafka:
    bootstrap_servers: {servers}
sources:
  - name: orders_raw
    topic: {raw}
    columns:
      - {{name: order_id, type: bigint}}
      - {{name: amount, type: double}}
models:
  - name: orders_clean
    materialized: stream
    key: order_id
    advanced:
      topic:
        name: {clean}
        partitions: 2
        config:
          retention.ms: 86400000
          cleanup.policy: compact
    sql: SELECT order_id, amount FROM {{{{ source("orders_raw") }}}} WHERE amount > 0
"""


def read_records(servers: str, topic: str) -> list[tuple[str | None, dict[str, Any]]]:
    return [(key, json.loads(value)) for key, value in read_messages(servers, topic)]


def test_a_malformed_value_is_quarantined_with_its_offset(kafka_broker: KafkaBroker, tmp_path: Path,
                                                          streamt_here: StreamtHere) -> None:
    servers = kafka_broker.bootstrap_servers
    tag = uuid.uuid4().hex[:8]
    raw, clean = f"orders.raw.{tag}", f"orders.clean.{tag}"
    admin.create_topic(servers, raw, partitions=1)
    values = [json.dumps({"order_id": i, "amount": float(i)}) for i in range(1, 4)]
    values += ["{not json at all", json.dumps({"order_id": 4, "amount": 4.5}), json.dumps({"order_id": 5})]
    admin.produce(servers, raw, [(None, v) for v in values])
    root = write_project(tmp_path / "kq", {"stream_project.yml": PROJECT.format(servers=servers, raw=raw,
                                                                                 clean=clean)})
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    r = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert r.returncode == 0, r.stdout + r.stderr

    topic = admin.describe_topic(servers, clean)
    assert (topic.partitions, topic.replication) == (2, 1)
    assert topic.config == {"cleanup.policy": "compact", "retention.ms": "86400000"}
    published = read_records(servers, clean)  # offset 5 (no amount) fails the WHERE, as NULL > 0 does
    assert sorted(published, key=lambda kv: str(kv[0])) == [
        ("1", {"order_id": 1, "amount": 1.0}), ("2", {"order_id": 2, "amount": 2.0}),
        ("3", {"order_id": 3, "amount": 3.0}), ("4", {"order_id": 4, "amount": 4.5})]

    quarantine = root / ".streamt" / "warehouse" / "orders_raw__quarantine" / "data"
    rows = DeltaTable(str(quarantine)).to_pyarrow_table().to_pylist()  # a Delta table
    assert [(q["raw_record"], q["source_file"], q["source"]) for q in rows] == [
        ("{not json at all", f"{raw}/0/3", "orders_raw")]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("orders_clean"))
    assert event is not None and event.asset_materialization is not None
    assert event.asset_materialization.metadata["quarantined_rows"].value == 1
