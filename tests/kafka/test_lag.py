"""Consumer lag of a project's Kafka sources against a real broker: end offsets from the broker minus
the offsets of each stream's last committed batch (a checkpoint written here in Spark's format),
``streamt status --lag`` (table and JSON), and a broker that does not answer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from dagster_streamt.api import load
from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker
from dagster_streamt.kafka.lag import project_lag
from dagster_streamt.spark.storage.paths import ProjectPaths

from ..helpers import write_project
from .test_lag_checkpoint import batch

pytestmark = pytest.mark.kafka

PROJECT = """\
project:
  name: lagged
runtime:
  kafka:
    bootstrap_servers: {servers}
sources:
  - name: payments
    topic: {pay}
    options: {{startingOffsets: earliest}}
    columns: [{{name: id, type: bigint}}]
  - name: refunds
    topic: {refunds}
    columns: [{{name: id, type: bigint}}]
  - name: unused
    topic: {refunds}
models:
  - name: clean
    materialized: stream
    sql: SELECT id FROM {{{{ source("payments") }}}} WHERE id >= 0
  - name: via_view
    materialized: view
    sql: SELECT id FROM {{{{ source("payments") }}}}
  - name: doubled
    materialized: stream
    sql: SELECT id * 2 AS id FROM {{{{ ref("via_view") }}}}
  - name: refund_count
    materialized: table
    sql: SELECT count(*) AS n FROM {{{{ source("refunds") }}}}
"""


def topics(servers: str) -> tuple[str, str]:
    pay, refunds = f"pay-{uuid.uuid4().hex[:8]}", f"refunds-{uuid.uuid4().hex[:8]}"
    admin.create_topic(servers, pay, partitions=2)
    admin.create_topic(servers, refunds, partitions=1)
    admin.produce(servers, pay, [(f"k{i}", json.dumps({"id": i})) for i in range(40)])
    admin.produce(servers, refunds, [(None, json.dumps({"id": i})) for i in range(3)])
    return pay, refunds


def project(tmp_path: Path, servers: str, pay: str, refunds: str) -> Path:
    return write_project(tmp_path / "p", {"stream_project.yml": PROJECT.format(servers=servers, pay=pay,
                                                                              refunds=refunds)})


def status(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "status", "--lag", "-p", str(root), *args],
                          capture_output=True, text=True, timeout=300, env=env(root))


def env(root: Path) -> dict[str, str]:
    """The CLI's environment with a Dagster home of the test's own."""
    home = root.parent / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return {**os.environ, "DAGSTER_HOME": str(home)}


def test_lag_of_each_stream_from_its_checkpoint(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    servers = kafka_broker.bootstrap_servers
    pay, refunds = topics(servers)
    end = admin.end_offsets(servers, pay)
    assert sum(end.values()) == 40 and len(end) == 2
    root = project(tmp_path, servers, pay, refunds)
    loaded = load(root)
    paths = ProjectPaths.from_project(loaded.project)
    half = {p: o // 2 for p, o in end.items()}
    # clean: two committed batches (the first read up to 1 per partition), a third planned, not finished
    batch(paths.checkpoint("clean"), 0, {pay: {"0": 1, "1": 1}})
    batch(paths.checkpoint("clean"), 1, {pay: {str(p): o for p, o in half.items()}})
    batch(paths.checkpoint("clean"), 2, {pay: {str(p): o for p, o in end.items()}}, committed=False)
    # doubled (reads the topic through a view) never ran: no checkpoint

    lags = {s.source: s for s in project_lag(loaded)}
    assert sorted(lags) == ["payments", "refunds", "unused"]
    s = lags["payments"]
    assert s.mode == "stream" and s.end_offsets == {pay: end} and s.messages == 40
    clean, doubled = sorted(s.readers, key=lambda r: r.reader)
    assert (clean.reader, clean.batch) == ("clean", 1)
    assert [(p.partition, p.end_offset, p.committed, p.lag) for p in clean.partitions] == [
        (p, end[p], half[p], end[p] - half[p]) for p in sorted(end)]
    assert clean.total == s.lag == 40 - sum(half.values())
    assert (doubled.reader, doubled.batch, doubled.total) == ("doubled", None, None)
    assert (lags["refunds"].mode, lags["refunds"].readers, lags["refunds"].lag) == ("batch", (), None)
    assert lags["refunds"].messages == 3 and lags["unused"].mode == "none"

    r = status(root)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    head = next(line for line in lines if line.startswith("payments "))
    assert pay in head and head.split()[-3] == f"{40 - sum(half.values()):,}", r.stdout
    assert any(line.split()[:1] == ["clean"] and "batch 1" in line for line in lines), r.stdout
    assert any("doubled" in line and "never ran" in line for line in lines), r.stdout
    assert any(line.startswith("refunds ") and "batch" in line and "no lag" in line for line in lines), r.stdout

    r = status(root, "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    kafka = {s["source"]: s for s in json.loads(r.stdout)["kafka"]}
    assert kafka["payments"]["lag"] == 40 - sum(half.values())
    assert kafka["payments"]["end_offsets"] == {pay: {str(p): o for p, o in sorted(end.items())}}
    (reader,) = [x for x in kafka["payments"]["readers"] if x["reader"] == "clean"]
    assert [(p["partition"], p["committed"], p["lag"]) for p in reader["partitions"]] == [
        (p, half[p], end[p] - half[p]) for p in sorted(end)]
    assert kafka["refunds"]["mode"] == "batch" and kafka["refunds"]["lag"] is None


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_broker_is_one_clear_line(tmp_path: Path) -> None:
    root = project(tmp_path, f"127.0.0.1:{_closed_port()}", "pay", "refunds")
    for args in ((), ("--format", "json")):
        r = status(root, *args)
        assert r.returncode == 1, r.stdout + r.stderr
        assert "Traceback" not in r.stdout + r.stderr
        said = [line for line in (r.stdout + r.stderr).splitlines() if "Kafka lag unavailable" in line]
        assert len(said) == 1 and "127.0.0.1:" in said[0] and "streamt kafka start" in said[0], r.stdout + r.stderr
