"""Publishing a batch of records to a topic in one Kafka transaction, fenced against replays.

Spark's Kafka sink is at least once: a micro-batch written before a crash and replayed after it is
written twice, and a batch cut short leaves part of itself in the topic. Kafka's own mechanism for
this is a transaction, and Spark's sink has none, so a topic is published here through one
transactional producer (confluent-kafka) per batch, which gives three guarantees:

* **atomic**: consumers reading ``read_committed`` (Flink's Kafka source, and our Kafka sources by
  default) see all of a batch or none of it; a crash aborts the open transaction;
* **fenced**: the transaction also commits the batch id, as the offset of a consumer group named after
  the publishing query (Kafka's ``send_offsets_to_transaction``, the consume-transform-produce
  pattern), so a replayed batch finds its id committed and is skipped instead of written again;
* **zombie-proof**: a producer of a killed run holding the same ``transactional.id`` is fenced by
  the next run's ``init_transactions``, which also aborts what it left open.

The records pass through the process that calls :meth:`TopicWriter.publish` (Spark's driver for
``foreachBatch``): that is the price of one transaction per batch, measured in
``benchmarks/bench_kafka_latency.py``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

TIMEOUT = 60.0
# A transaction left open by a killed run holds read_committed consumers of the topic back until the
# next run's producer aborts it or the broker does after this long (the broker's cap is 15 min).
TRANSACTION_TIMEOUT_MS = 120_000
_LOG = logging.getLogger("dagster_streamt.kafka.client")
_FENCE_PARTITION = 0  # the fence's offset is kept on partition 0 of the output topic (any partition would do)
# A group's coordinator moves or is still loading (a fresh broker creating __consumer_offsets, a
# leader change): Kafka says so with these codes and the client is to ask again, not to fail the batch.
_COORDINATOR_BUSY = frozenset({KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                               KafkaError.COORDINATOR_NOT_AVAILABLE})

Record = tuple[str | bytes | None, str | bytes | None]  # (key, value)


class KafkaPublishError(RuntimeError):
    """A transaction the broker refused or did not complete; nothing of the batch is visible."""


@dataclass(frozen=True)
class TopicWriter:
    """Writes batches to ``topic`` transactionally; picklable (it travels inside Spark's ``foreachBatch``
    function to a Spark Connect server). ``conf`` holds librdkafka settings with ``bootstrap.servers``;
    ``transactional_id`` is stable for one output (project, model, topic) across runs, so that a new run
    fences the previous one's producer."""

    conf: tuple[tuple[str, str], ...]
    topic: str
    transactional_id: str

    @classmethod
    def create(cls, conf: Mapping[str, str], topic: str, transactional_id: str) -> TopicWriter:
        return cls(tuple(sorted(conf.items())), topic, transactional_id)

    def _fence_consumer(self, query: str) -> Consumer:
        """A client of the fence's consumer group: reads its offset, and names the group in a transaction."""
        return Consumer({**dict(self.conf), "group.id": f"{self.transactional_id}.{query}", "logger": _LOG,
                         "enable.auto.commit": False})

    def _committed(self, consumer: Consumer, timeout: float = TIMEOUT) -> int | None:
        """The fence's committed batch id; a coordinator that is moving or loading is asked again (with
        backoff, within ``timeout``), any other error fails the batch before anything is written."""
        deadline, delay = time.monotonic() + timeout, 0.2
        while True:
            try:
                found = consumer.committed([TopicPartition(self.topic, _FENCE_PARTITION)],
                                           timeout=max(1.0, deadline - time.monotonic()))
                break
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                busy = isinstance(err, KafkaError) and (err.code() in _COORDINATOR_BUSY or err.retriable())
                if busy and time.monotonic() + delay < deadline:
                    time.sleep(delay)
                    delay = min(2 * delay, 5.0)
                    continue
                raise KafkaPublishError(f"could not read the last published batch of topic {self.topic!r}: "
                                        f"{err.str() if isinstance(err, KafkaError) else exc}") from None
        offset = found[0].offset if found else -1
        return offset - 1 if offset is not None and offset > 0 else None

    def publish(self, records: Iterable[Record], fence: tuple[str, int] | None = None) -> int:
        """Write ``records`` in one transaction and return how many; with ``fence=(query, batch_id)`` the
        batch id commits with them, and a batch already committed is skipped (returns 0)."""
        errors: list[str] = []

        def delivered(err: KafkaError | None, _msg: Message) -> None:
            if err is not None and len(errors) < 3:
                errors.append(err.str())

        producer = Producer({**dict(self.conf), "logger": _LOG, "transactional.id": self.transactional_id,
                             "enable.idempotence": True, "linger.ms": 20, "compression.type": "lz4",
                             "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS})
        count = 0
        group = self._fence_consumer(fence[0]) if fence is not None else None
        try:
            # first fence an older producer of this output and abort its open transaction: until then the
            # fence's offset is pending, and reading it waits (Kafka answers UNSTABLE_OFFSET_COMMIT)
            producer.init_transactions(TIMEOUT)
            if fence is not None and group is not None:
                last = self._committed(group)
                if last is not None and fence[1] <= last:
                    return 0
            producer.begin_transaction()
            for key, value in records:
                while True:
                    try:
                        producer.produce(self.topic, value=value, key=key, on_delivery=delivered)
                        break
                    except BufferError:  # the local queue is full: let deliveries drain
                        producer.poll(0.1)
                count += 1
                if count % 10_000 == 0:
                    producer.poll(0)
            if fence is not None and group is not None:
                producer.send_offsets_to_transaction([TopicPartition(self.topic, _FENCE_PARTITION, fence[1] + 1)],
                                                     group.consumer_group_metadata(), TIMEOUT)
            left = producer.flush(TIMEOUT)
            if errors or left:
                raise KafkaPublishError(errors[0] if errors else f"{left} record(s) not delivered in {TIMEOUT:g} s")
            producer.commit_transaction(TIMEOUT)
        except (KafkaException, KafkaPublishError) as exc:
            # when this fails, the broker's timeout or the next run's init_transactions aborts the transaction
            with contextlib.suppress(KafkaException):
                producer.abort_transaction(TIMEOUT)
            reason = exc.args[0].str() if isinstance(exc, KafkaException) and exc.args else str(exc)
            raise KafkaPublishError(f"could not publish to topic {self.topic!r}: {reason}; nothing of this "
                                    "batch was committed, and the next run publishes it again") from None
        finally:
            if group is not None:
                group.close()
        return count
