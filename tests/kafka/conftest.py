"""One real Kafka broker for the whole test session (a start costs about 5 s), from the jars
scripts/setup.sh caches; the tests that need it skip, saying how to get them, when they are missing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dagster_streamt.kafka.broker import KafkaBroker, start_broker
from dagster_streamt.kafka.jars import KafkaJarsMissing, broker_classpath


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A single-node KRaft broker on a free loopback port in a temporary folder, stopped at the end."""
    try:
        broker_classpath()
    except KafkaJarsMissing as exc:
        pytest.skip(f"no Kafka broker jars; run `bash scripts/setup.sh` to fetch them ({exc})")
    broker = start_broker(tmp_path_factory.mktemp("kafka"))
    try:
        yield broker
    finally:
        broker.stop()
