"""Kafka topic administration from Python: create, list, describe, end offsets, and a small producer.

Through confluent-kafka (Confluent's client over librdkafka, wheels with the C library inside) rather
than Kafka's Java tools: each ``java -cp ... TopicCommand`` call starts a JVM (seconds on two cores)
and prints text to parse, while this answers in milliseconds with typed results and needs no broker
jars on the machine. Spark is not involved, so these work before any session exists.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import IsolationLevel, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic, OffsetSpec, ResourceType

TIMEOUT = 30.0
# librdkafka logs through this logger instead of writing to stderr; a NullHandler keeps it quiet unless
# the application configures logging (a broker that is still starting is not worth a warning).
_LOG = logging.getLogger("dagster_streamt.kafka.client")
_LOG.addHandler(logging.NullHandler())


class KafkaAdminError(RuntimeError):
    """A topic operation the broker refused or did not answer; the message says which and why."""


@dataclass(frozen=True)
class TopicInfo:
    """A topic as the broker has it: partition count, replication factor and its non-default configs."""

    name: str
    partitions: int
    replication: int
    config: dict[str, str] = field(default_factory=dict)


def _client_conf(bootstrap_servers: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap_servers, "logger": _LOG, **(extra or {})}


def _admin(bootstrap_servers: str, conf: Mapping[str, Any] | None) -> AdminClient:
    return AdminClient(_client_conf(bootstrap_servers, conf))


def _fail(what: str, exc: BaseException) -> KafkaAdminError:
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else exc
    reason = err.str() if isinstance(err, KafkaError) else str(err)
    return KafkaAdminError(f"{what}: {reason}")


def create_topic(bootstrap_servers: str, name: str, partitions: int = 1, replication: int = 1,
                 config: Mapping[str, str] | None = None, *, exist_ok: bool = False,
                 conf: Mapping[str, Any] | None = None, timeout: float = TIMEOUT) -> None:
    """Create ``name`` with ``partitions``, ``replication`` (-1: the broker's default for either) and topic
    ``config`` (e.g. ``{"cleanup.policy": "compact"}``); an existing topic is an error unless ``exist_ok``."""
    topic = NewTopic(name, num_partitions=partitions, replication_factor=replication, config=dict(config or {}))
    admin = _admin(bootstrap_servers, conf)  # held until the answer: a dropped client cancels its requests
    futures = admin.create_topics([topic], operation_timeout=timeout, request_timeout=timeout)
    try:
        futures[name].result(timeout=timeout)
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        if exist_ok and isinstance(err, KafkaError) and err.code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return
        raise _fail(f"could not create topic {name!r} on {bootstrap_servers}", exc) from None


def _metadata(bootstrap_servers: str, conf: Mapping[str, Any] | None, timeout: float, what: str) -> Any:
    try:
        return _admin(bootstrap_servers, conf).list_topics(timeout=timeout)
    except KafkaException as exc:
        raise _fail(f"could not {what} {bootstrap_servers}", exc) from None


def list_topics(bootstrap_servers: str, *, internal: bool = False, conf: Mapping[str, Any] | None = None,
                timeout: float = TIMEOUT) -> dict[str, TopicInfo]:
    """The broker's topics (without ``__consumer_offsets`` and other internal ones unless ``internal``),
    by name, with partitions and replication; configs are left empty (see :func:`describe_topic`)."""
    meta = _metadata(bootstrap_servers, conf, timeout, "list the topics of")
    out: dict[str, TopicInfo] = {}
    for name, topic in sorted(meta.topics.items()):
        if topic.error is not None or (name.startswith("__") and not internal):
            continue
        replicas = [len(p.replicas) for p in topic.partitions.values()]
        out[name] = TopicInfo(name, len(topic.partitions), max(replicas, default=0))
    return out


def broker_count(bootstrap_servers: str, *, conf: Mapping[str, Any] | None = None, timeout: float = TIMEOUT) -> int:
    """How many brokers the cluster has: no topic can be replicated more times than that."""
    return len(_metadata(bootstrap_servers, conf, timeout, "reach").brokers)


def _topic(bootstrap_servers: str, name: str, conf: Mapping[str, Any] | None, timeout: float) -> TopicInfo:
    found = list_topics(bootstrap_servers, internal=True, conf=conf, timeout=timeout).get(name)
    if found is None:
        raise KafkaAdminError(f"topic {name!r} does not exist on {bootstrap_servers}")
    return found


def describe_topic(bootstrap_servers: str, name: str, *, conf: Mapping[str, Any] | None = None,
                   timeout: float = TIMEOUT) -> TopicInfo:
    """One topic with its configs that differ from the broker's defaults (those set on the topic)."""
    found = _topic(bootstrap_servers, name, conf, timeout)
    resource = ConfigResource(ResourceType.TOPIC, name)
    try:
        admin = _admin(bootstrap_servers, conf)
        configs = admin.describe_configs([resource], request_timeout=timeout)[resource].result(timeout=timeout)
    except KafkaException as exc:
        raise _fail(f"could not read the configs of topic {name!r}", exc) from None
    overrides = {key: str(e.value) for key, e in sorted(configs.items())
                 if getattr(e.source, "value", e.source) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
    return TopicInfo(name, found.partitions, found.replication, overrides)


def _offsets(bootstrap_servers: str, topic: str, spec: OffsetSpec, which: str, conf: Mapping[str, Any] | None,
             timeout: float, level: IsolationLevel = IsolationLevel.READ_UNCOMMITTED) -> dict[int, int]:
    found = _topic(bootstrap_servers, topic, conf, timeout)
    wanted = {TopicPartition(topic, p): spec for p in range(found.partitions)}
    try:
        admin = _admin(bootstrap_servers, conf)  # held until the answers: a dropped client cancels its requests
        futures = admin.list_offsets(wanted, isolation_level=level, request_timeout=timeout)
        return {tp.partition: fut.result(timeout=timeout).offset for tp, fut in sorted(
            futures.items(), key=lambda item: item[0].partition)}
    except KafkaException as exc:
        raise _fail(f"could not read the {which} offsets of topic {topic!r}", exc) from None


def end_offsets(bootstrap_servers: str, topic: str, *, conf: Mapping[str, Any] | None = None,
                timeout: float = TIMEOUT, committed: bool = False) -> dict[int, int]:
    """Partition -> the offset the next record will get (records so far, on a topic never trimmed);
    ``committed``: the end a ``read_committed`` consumer can reach now (before any open transaction)."""
    level = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
    return _offsets(bootstrap_servers, topic, OffsetSpec.latest(), "end", conf, timeout, level)


def start_offsets(bootstrap_servers: str, topic: str, *, conf: Mapping[str, Any] | None = None,
                  timeout: float = TIMEOUT) -> dict[int, int]:
    """Partition -> its first offset still held (0 until retention or compaction removed records): where
    Spark starts a partition it has no offset for, and with the end offsets, how many records a topic holds."""
    return _offsets(bootstrap_servers, topic, OffsetSpec.earliest(), "start", conf, timeout)


def produce(bootstrap_servers: str, topic: str, records: Iterable[tuple[bytes | str | None, bytes | str | None]],
            *, conf: Mapping[str, Any] | None = None, timeout: float = TIMEOUT) -> int:
    """Send ``(key, value)`` records to ``topic`` and wait until the broker has them all; returns how
    many. For tests and seeding a local broker: one flush at the end, the first failure raised."""
    errors: list[str] = []

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(err.str())

    producer = Producer(_client_conf(bootstrap_servers, {
        "enable.idempotence": True,
        "message.timeout.ms": int(timeout * 1000),  # the record's own error, not just "not delivered"
        "topic.metadata.propagation.max.ms": int(min(timeout, 5.0) * 1000),  # a missing topic fails soon
        **(conf or {})}))
    count = 0
    for key, value in records:
        producer.produce(topic, value=value, key=key, on_delivery=delivered)
        producer.poll(0)
        count += 1
    left = producer.flush(timeout)
    if errors or left:
        reason = errors[0] if errors else f"{left} record(s) not delivered within {timeout:g} s"
        raise KafkaAdminError(f"could not write to topic {topic!r} on {bootstrap_servers}: {reason}")
    return count
