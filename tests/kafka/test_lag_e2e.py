"""``streamt status --lag`` after real ``streamt run``s of a stream model over a Kafka topic: the checkpoint
Spark wrote is read as our hand-made ones are, the lag is 0 after a run, the count of records produced
since, and 0 again after the next run."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker
from dagster_streamt.kafka.lag import read_offsets

from ..conftest import StreamtHere
from ..helpers import write_project
from .test_lag import env, status
from .test_lag_checkpoint import META

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

PROJECT = """\
project:
  name: lag_e2e
runtime:
  kafka:
    bootstrap_servers: {servers}
sources:
  - name: payments
    topic: {pay}
    options: {{startingOffsets: earliest}}
    columns: [{{name: id, type: bigint}}, {{name: amount, type: double}}]
models:
  - name: big_payments
    materialized: stream
    sql: SELECT id, amount FROM {{{{ source("payments") }}}} WHERE amount > 10
"""


def run(here: StreamtHere, root: Path) -> None:
    r = here("run", "-p", str(root), env={"DAGSTER_HOME": env(root)["DAGSTER_HOME"]})
    assert r.returncode == 0, r.stdout + r.stderr


def kafka_status(root: Path) -> dict[str, Any]:
    r = status(root, "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    return {s["source"]: s for s in json.loads(r.stdout)["kafka"]}["payments"]


def produce(servers: str, topic: str, first: int, count: int) -> None:
    admin.produce(servers, topic, [(f"k{i}", json.dumps({"id": i, "amount": float(i % 30)}))
                                   for i in range(first, first + count)])


def test_status_lag_after_real_runs(kafka_broker: KafkaBroker, tmp_path: Path, streamt_here: StreamtHere) -> None:
    servers = kafka_broker.bootstrap_servers
    pay = f"payments-{uuid.uuid4().hex[:8]}"
    admin.create_topic(servers, pay, partitions=3)
    produce(servers, pay, 0, 60)
    root = write_project(tmp_path / "p", {"stream_project.yml": PROJECT.format(servers=servers, pay=pay)})

    before = kafka_status(root)  # never ran: offsets known, lag unknown
    assert before["mode"] == "stream" and before["lag"] is None and before["messages"] == 60
    assert [(r["reader"], r["batch"]) for r in before["readers"]] == [("big_payments", None)]

    run(streamt_here, root)
    end = admin.end_offsets(servers, pay)
    after = kafka_status(root)
    readers = {r["reader"]: r for r in after["readers"]}
    # the stream and the source's quarantine query (its columns are parsed from JSON) both read the topic
    assert sorted(readers) == ["big_payments", "payments (quarantine)"] and after["lag"] == 0
    for reader in readers.values():
        assert reader["batch"] is not None and reader["lag"] == 0
        assert {p["partition"]: p["committed"] for p in reader["partitions"]} == end
    reader = readers["big_payments"]

    # the checkpoint Spark wrote has the layout the unit tests write by hand
    checkpoint = Path(reader["checkpoint"])
    log = (checkpoint / "offsets" / str(reader["batch"])).read_text(encoding="utf-8")
    lines = log.splitlines()
    assert lines[0] == "v1" and sorted(json.loads(lines[1])) == sorted(json.loads(META)), log
    assert read_offsets(checkpoint / "offsets" / str(reader["batch"])) == [
        {pay: {str(p): o for p, o in end.items()}}], log
    assert (checkpoint / "commits" / str(reader["batch"])).read_text(encoding="utf-8") == \
        'v1\n{"nextBatchWatermarkMs":0}'

    produce(servers, pay, 60, 7)
    assert kafka_status(root)["lag"] == 7
    table = status(root)
    assert table.returncode == 0, table.stdout + table.stderr
    head = next(line for line in table.stdout.splitlines() if line.startswith("payments "))
    assert pay in head and head.split()[-3] == "7", table.stdout

    run(streamt_here, root)
    assert kafka_status(root)["lag"] == 0
