"""Reading the fence's committed batch asks again while the group's coordinator moves or loads (seen on a
fresh broker: "Failed to get committed offsets: Broker: Not coordinator"), and fails at once, with the
topic named, on any other error. The client is a stand-in here only because a coordinator move cannot be
provoked on demand; the real transactions run against a broker in test_kafka_crash.py and the e2e tests."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from dagster_streamt.kafka.transactions import KafkaPublishError, TopicWriter


class _Consumer:
    def __init__(self, failures: list[int], offset: int) -> None:
        self.failures, self.offset, self.calls = failures, offset, 0

    def committed(self, partitions: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        self.calls += 1
        if self.failures:
            raise KafkaException(KafkaError(self.failures.pop(0)))
        return [TopicPartition(partitions[0].topic, 0, self.offset)]


def _writer() -> TopicWriter:
    return TopicWriter.create({"bootstrap.servers": "127.0.0.1:9"}, "out", "p.m.out")


def test_a_busy_coordinator_is_asked_again() -> None:
    consumer: Any = _Consumer([KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS], offset=8)
    assert _writer()._committed(consumer, timeout=10) == 7 and consumer.calls == 3


def test_another_error_or_no_time_left_fails_naming_the_topic() -> None:
    consumer: Any = _Consumer([KafkaError.TOPIC_AUTHORIZATION_FAILED], offset=8)
    with pytest.raises(KafkaPublishError, match="last published batch of topic 'out'"):
        _writer()._committed(consumer, timeout=10)
    assert consumer.calls == 1
    busy: Any = _Consumer([KafkaError.NOT_COORDINATOR] * 100, offset=8)
    with pytest.raises(KafkaPublishError, match="topic 'out'"):
        _writer()._committed(busy, timeout=0.5)
