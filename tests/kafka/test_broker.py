"""A real broker: it starts and stops leaving no process, and topics, records and offsets round-trip
through the admin helpers."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker, port_open, start_broker

pytestmark = pytest.mark.kafka


def _topic() -> str:
    return f"t_{uuid.uuid4().hex[:8]}"


def test_the_broker_answers_on_loopback(kafka_broker: KafkaBroker) -> None:
    assert kafka_broker.bootstrap_servers.startswith("127.0.0.1:")
    assert kafka_broker.running() and port_open(kafka_broker.port)
    assert "__consumer_offsets" not in admin.list_topics(kafka_broker.bootstrap_servers)  # internal ones hidden


def test_a_topic_with_partitions_and_config_is_listed(kafka_broker: KafkaBroker) -> None:
    name = _topic()
    admin.create_topic(kafka_broker.bootstrap_servers, name, partitions=3, config={"cleanup.policy": "compact"})
    listed = admin.list_topics(kafka_broker.bootstrap_servers)
    assert listed[name] == admin.TopicInfo(name, partitions=3, replication=1)
    assert admin.describe_topic(kafka_broker.bootstrap_servers, name) == admin.TopicInfo(
        name, 3, 1, {"cleanup.policy": "compact"})
    with pytest.raises(admin.KafkaAdminError, match="already exists"):
        admin.create_topic(kafka_broker.bootstrap_servers, name, partitions=3)
    admin.create_topic(kafka_broker.bootstrap_servers, name, partitions=3, exist_ok=True)


def test_records_move_the_end_offsets(kafka_broker: KafkaBroker) -> None:
    name = _topic()
    admin.create_topic(kafka_broker.bootstrap_servers, name, partitions=2)
    assert admin.end_offsets(kafka_broker.bootstrap_servers, name) == {0: 0, 1: 0}
    sent = admin.produce(kafka_broker.bootstrap_servers, name, [(f"k{i}", f'{{"n": {i}}}') for i in range(7)])
    offsets = admin.end_offsets(kafka_broker.bootstrap_servers, name)
    assert sent == 7 and sorted(offsets) == [0, 1] and sum(offsets.values()) == 7


def test_no_topic_is_created_by_a_write(kafka_broker: KafkaBroker) -> None:
    """auto.create.topics.enable=false: a misspelt topic fails instead of appearing."""
    name = _topic()
    with pytest.raises(admin.KafkaAdminError, match=name):
        admin.produce(kafka_broker.bootstrap_servers, name, [(None, "x")], timeout=1)
    assert name not in admin.list_topics(kafka_broker.bootstrap_servers)
    with pytest.raises(admin.KafkaAdminError, match="does not exist"):
        admin.end_offsets(kafka_broker.bootstrap_servers, name)


def test_stop_leaves_no_process_and_streamt_kafka_start_keeps_the_topics(kafka_broker: KafkaBroker,
                                                                         tmp_path: Path) -> None:
    """A broker of its own: stopped, nothing is left; ``streamt kafka start`` on its folder serves the same
    topic and records, prints the address, and Ctrl-C stops it cleanly (exit 0)."""
    folder = tmp_path / "own"
    broker = start_broker(folder)
    name = _topic()
    admin.create_topic(broker.bootstrap_servers, name, partitions=2)
    admin.produce(broker.bootstrap_servers, name, [(None, "a"), (None, "b")])
    pid, port = broker.process.pid, broker.port
    broker.stop()
    assert broker.process.returncode is not None and not port_open(port)
    assert not Path(f"/proc/{pid}").exists() and not (folder / "broker.pid").exists()

    cli = subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "kafka", "start", "--dir", str(folder),
                            "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert cli.stdout is not None
        lines = [cli.stdout.readline(), cli.stdout.readline()]
        found = re.search(r"Kafka broker up at (127\.0\.0\.1:\d+)", lines[1])
        assert found, lines
        assert sum(admin.end_offsets(found.group(1), name).values()) == 2
        broker_pid = int((folder / "broker.pid").read_text())
        cli.send_signal(signal.SIGINT)
        out, _ = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 0 and out.strip().endswith("stopped"), out
    assert not Path(f"/proc/{broker_pid}").exists()


def test_records_with_historical_timestamps_are_kept(kafka_broker: KafkaBroker) -> None:
    """Kafka's default 7-day time retention would delete records produced with last year's event times at
    its first retention check; the local broker keeps them (what a replay of historical data needs)."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    client = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    resource = ConfigResource(ResourceType.BROKER, "1")
    configs = client.describe_configs([resource])[resource].result(timeout=30)
    assert configs["log.retention.ms"].value == "-1"
