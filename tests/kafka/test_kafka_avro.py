"""Avro values on a real broker: a source with an inline Avro ``schema.definition`` is decoded with
spark-avro, plain records and records in Confluent's wire format (magic byte 0, 4-byte schema id) alike;
a record that does not decode is quarantined with its topic/partition/offset and counted, not dropped."""

from __future__ import annotations

import base64
import io
import json
import uuid
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker

from ..conftest import StreamtHere
from ..helpers import write_project

fastavro = pytest.importorskip("fastavro")

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

SCHEMA = {"type": "record", "name": "Payment", "namespace": "com.example",
          "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
                     {"name": "amount", "type": "double"}]}

PROJECT = """\
project:
  name: kavro
runtime:
  kafka:
    bootstrap_servers: {servers}
sources:
  - name: payments_raw
    topic: {raw}
    schema:
      format: avro
      definition: '{definition}'
models:
  - name: payments_doubled
    materialized: stream
    advanced:
      topic:
        name: {out}
    sql: SELECT id, name, amount * 2 AS doubled FROM {{{{ source("payments_raw") }}}}
"""


def avro(record: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(SCHEMA), record)
    return out.getvalue()


def confluent(record: dict[str, Any], schema_id: int = 42) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + avro(record)


def test_avro_values_plain_and_confluent_framed(kafka_broker: KafkaBroker, tmp_path: Path,
                                                streamt_here: StreamtHere) -> None:
    servers = kafka_broker.bootstrap_servers
    tag = uuid.uuid4().hex[:8]
    raw, out = f"payments.avro.{tag}", f"payments.doubled.{tag}"
    admin.create_topic(servers, raw, partitions=1)
    malformed = b"not avro at all"
    records = [
        avro({"id": 1, "name": "plain", "amount": 1.25}),
        # a plain record starting with byte 0 (id 0): the framed decode fails, the whole value decodes
        avro({"id": 0, "name": "zero", "amount": 0.5}),
        confluent({"id": 2, "name": "framed", "amount": 2.5}),
        malformed,  # offset 3
        confluent({"id": 3, "name": "héllo", "amount": -4.0}, schema_id=7),
    ]
    assert records[1][0] == 0
    admin.produce(servers, raw, [(None, v) for v in records])
    root = write_project(tmp_path / "kavro", {"stream_project.yml": PROJECT.format(
        servers=servers, raw=raw, out=out, definition=json.dumps(SCHEMA))})
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    r = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert r.returncode == 0, r.stdout + r.stderr

    table = root / ".streamt" / "warehouse" / "payments_doubled" / "data"
    rows = sorted(pq.read_table(table).to_pylist(), key=lambda row: row["id"])
    assert rows == [{"id": 0, "name": "zero", "doubled": 1.0}, {"id": 1, "name": "plain", "doubled": 2.5},
                    {"id": 2, "name": "framed", "doubled": 5.0}, {"id": 3, "name": "héllo", "doubled": -8.0}]

    quarantine = root / ".streamt" / "warehouse" / "payments_raw__quarantine" / "data"
    bad = DeltaTable(str(quarantine)).to_pyarrow_table().to_pylist()  # a Delta table
    assert [(q["source_file"], q["source"]) for q in bad] == [(f"{raw}/0/3", "payments_raw")]
    assert base64.b64decode(bad[0]["raw_record"]) == malformed
    assert "could not be parsed" in bad[0]["reason"]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("payments_doubled"))
    assert event is not None and event.asset_materialization is not None
    assert event.asset_materialization.metadata["quarantined_rows"].value == 1
