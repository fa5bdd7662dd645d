"""One real Kafka broker for the whole test session (a start costs about 5 s), from Kafka's jars
(`streamt jars fetch broker`); the tests that need it skip, saying how to get them, when they cannot be had."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dagster_streamt.jars.sets import JarsUnavailable
from dagster_streamt.kafka.broker import KafkaBroker, broker_classpath, start_broker


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A single-node KRaft broker on a free loopback port in a temporary folder, stopped at the end."""
    try:
        broker_classpath()
    except JarsUnavailable as exc:
        pytest.skip(f"no Kafka broker jars; `streamt jars fetch broker` fetches them ({exc})")
    broker = start_broker(tmp_path_factory.mktemp("kafka"))
    try:
        yield broker
    finally:
        broker.stop()
