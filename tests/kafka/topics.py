"""Reading a topic back in tests: every record from the beginning to its current end, as a consumer
with ``read_committed`` (Flink's default, and what a transactional publisher is read with) or
``read_uncommitted`` (what a consumer sees of aborted transactions too)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from dagster_streamt.kafka import admin


def read_messages(servers: str, topic: str, *, committed: bool = True,
                  timeout: float = 60.0) -> list[tuple[str | None, str]]:
    """``(key, value)`` of every record up to the end offsets of now (for ``read_committed``, up to the
    first open transaction). The end is reached when the consumer's position passes it: a transaction's
    commit marker takes an offset no message has."""
    ends = {p: end for p, end in admin.end_offsets(servers, topic, committed=committed).items() if end > 0}
    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"test-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed" if committed else "read_uncommitted"})
    out: list[tuple[str | None, str]] = []
    try:
        parts = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in sorted(ends)]
        consumer.assign(parts)
        deadline = time.monotonic() + timeout
        while True:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                key = msg.key()
                out.append((key.decode() if key is not None else None, msg.value().decode()))
            positions = consumer.position([TopicPartition(topic, p) for p in sorted(ends)])
            if all(tp.offset >= ends[tp.partition] for tp in positions):
                return out
            assert time.monotonic() < deadline, f"topic {topic}: end {ends} not reached in {timeout:g} s"
    finally:
        consumer.close()


def read_topic(servers: str, topic: str, *, committed: bool = True) -> list[dict[str, Any]]:
    """The parsed JSON values of :func:`read_messages`."""
    return [json.loads(value) for _key, value in read_messages(servers, topic, committed=committed)]
