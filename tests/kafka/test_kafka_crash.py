"""Exactly once from a Kafka topic to every kind of output, through ``kill -9``: a stream model reading a
topic publishes its own topic, and sinks copy it to another topic, a JSON file export and a PostgreSQL
table. A run is killed with a batch's records inside an open Kafka transaction, another right after that
transaction committed (before Spark's checkpoint knew), and a plain rerun follows. Every output then holds
each expected record once, read as consumers read it (``read_committed`` for topics); the aborted copies a
``read_uncommitted`` consumer also sees are counted, because the README states that figure."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker
from dagster_streamt.spark.sinks.jdbc_tx import transaction

from ..conftest import POSTGRES_JAR, StreamtHere
from ..spark.kill import kill_group_when
from ..spark.postgres import postgres_url, skip_without_postgres
from ..spark.test_sink_crash import streamt
from .topics import read_messages

skip_without_postgres()
pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]
__all__ = ["postgres_url"]  # the fixture


def _pg(url: str, table: str) -> dict[str, str]:
    return {"url": url, "dbtable": table, "user": "postgres", "password": "unused", "driver": "org.postgresql.Driver"}


def write_project(root: Path, servers: str, url: str, tag: str) -> dict[str, str]:
    names = {"raw": f"orders.{tag}", "big": f"big.{tag}", "copy": f"copy.{tag}", "table": f"big_{tag}"}
    config = {
        "project": {"name": "kcrash"},
        "runtime": {"kafka": {"bootstrap_servers": servers},
                    "spark": {"conf": {"spark.jars": str(POSTGRES_JAR), "spark.sql.shuffle.partitions": "2"}}},
        "sources": [{"name": "orders", "topic": names["raw"],
                     "columns": [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]}],
        "models": [
            {"name": "big", "materialized": "stream", "key": "order_id", "advanced": {"topic": {"name": names["big"]}},
             "sql": 'SELECT order_id, amount FROM {{ source("orders") }} WHERE amount > 10'},
            {"name": "big_copy", "from": "big", "key": "order_id",
             "sink": {"format": "kafka", "options": {"topic": names["copy"]}}},
            {"name": "big_json", "from": "big", "sink": {"format": "json", "path": "exports/big"}},
            {"name": "big_pg", "from": "big", "sink": {"format": "jdbc", "options": _pg(url, names["table"])}},
        ],
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return names


def produce(servers: str, topic: str, ids: range) -> None:
    admin.produce(servers, topic, [(str(i), json.dumps({"order_id": i, "amount": float(i % 20)})) for i in ids])


def expected(ids: range) -> Counter[int]:
    return Counter(i for i in ids if i % 20 > 10)


def topic_ids(servers: str, topic: str, committed: bool = True) -> Counter[int]:
    if topic not in admin.list_topics(servers):
        return Counter()
    messages = read_messages(servers, topic, committed=committed)
    assert all(key == str(json.loads(value)["order_id"]) for key, value in messages)  # keyed by `key:`
    return Counter(json.loads(value)["order_id"] for _key, value in messages)


def outputs(root: Path, servers: str, url: str, names: dict[str, str]) -> dict[str, Counter[int]]:
    with transaction(_pg(url, "unused"), "test") as conn:
        known = {r[0] for r in conn.rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        pg = [r[0] for r in conn.rows(f"SELECT order_id FROM {names['table']}")] if names["table"] in known else []
    export = root / "exports" / "big"
    files = sorted(export.glob("*.json")) if export.exists() else []
    return {"topic": topic_ids(servers, names["big"]), "kafka_sink": topic_ids(servers, names["copy"]),
            "json_sink": Counter(json.loads(line)["order_id"] for f in files for line in f.read_text().splitlines()),
            "jdbc_sink": Counter(pg)}


def test_kill_9_inside_and_after_a_kafka_transaction_then_rerun_is_exactly_once(
        kafka_broker: KafkaBroker, postgres_url: str, tmp_path: Path, streamt_here: StreamtHere) -> None:
    servers, tag = kafka_broker.bootstrap_servers, uuid.uuid4().hex[:8]
    root = tmp_path / "kcrash"
    names = write_project(root, servers, postgres_url, tag)
    admin.create_topic(servers, names["raw"], partitions=2)

    produce(servers, names["raw"], range(0, 60))
    proc = streamt(root, pause=("kafka-commit", tmp_path / "p1"))
    kill_group_when(proc, lambda: (tmp_path / "p1" / "kafka-commit").exists())
    got = outputs(root, servers, postgres_url, names)
    assert got["topic"] == Counter(), "a killed transaction's records are visible to read_committed consumers"
    aborted = sum(topic_ids(servers, names["big"], committed=False).values())
    assert aborted == sum(expected(range(0, 60)).values())  # the open transaction held the whole batch

    produce(servers, names["raw"], range(60, 100))
    proc = streamt(root, pause=("kafka-committed", tmp_path / "p2"))
    kill_group_when(proc, lambda: (tmp_path / "p2" / "kafka-committed").exists())
    got = outputs(root, servers, postgres_url, names)
    for output, ids in got.items():
        assert max(ids.values(), default=1) == 1, f"{output} holds a record twice: {ids}"

    r = streamt_here("run", "-p", str(root))  # the rerun nobody kills: in this process
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    want = expected(range(0, 100))
    assert outputs(root, servers, postgres_url, names) == {
        "topic": want, "kafka_sink": want, "json_sink": want, "jdbc_sink": want}
    # what a read_uncommitted consumer sees beyond that: the first batch's aborted copy, and nothing else
    extra = topic_ids(servers, names["big"], committed=False) - want
    assert extra == expected(range(0, 60))


def test_a_kafka_sink_without_a_broker_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "nobroker"
    config: dict[str, Any] = {
        "project": {"name": "nobroker"},
        "sources": [{"name": "orders", "format": "json", "path": "in",
                     "columns": [{"name": "order_id", "type": "bigint"}]}],
        "models": [{"name": "copy", "sql": 'SELECT * FROM {{ source("orders") }}',
                    "sink": {"format": "kafka", "options": {"topic": "t"}}}],
    }
    root.mkdir()
    (root / "in").mkdir()
    (root / "in" / "a.json").write_text('{"order_id": 1}\n')
    (root / "stream_project.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    r = streamt(root)
    out, _ = r.communicate(timeout=600)
    assert r.returncode != 0
    assert "copy" in out and "bootstrap" in out and "Traceback" not in out, out[-3000:]
