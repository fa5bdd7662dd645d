"""Rows of a DataFrame published to a Kafka topic: the message shape, and the transactional write.

A row becomes a message whose value is the row as JSON and whose key is the model's (or sink's)
``key:`` column (its text), or a JSON object of several key columns: streamt's topic models key their
messages the same way. Each batch is written in one Kafka transaction from the driver
(:mod:`dagster_streamt.kafka.transactions`): all or nothing for ``read_committed`` consumers, and a
streaming micro-batch replayed after a crash is skipped because its id committed with its records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...kafka.transactions import KafkaPublishError, Record, TopicWriter
from ...spec.kafka import librdkafka_options
from ...spec.project import Project
from ...sql.identifiers import quote
from ..errors import ModelRunError
from ..storage.store import Loc
from .checkpoints import query_id

_MESSAGE_COLUMNS = {"key", "value", "headers", "topic", "partition"}


def keyed(df: DataFrame, key: Sequence[str]) -> DataFrame:
    """Kafka's ``value`` (JSON of the row) and ``key`` (the key column, or JSON of several). A DataFrame
    already shaped as messages (a ``value`` column, optionally ``key``) is sent as it is."""
    if "value" in df.columns and set(df.columns) <= _MESSAGE_COLUMNS:
        return df.select(*[F.col(c).cast("string") for c in ("key", "value") if c in df.columns])
    cols = [F.to_json(F.struct(*[F.col(quote(c)) for c in df.columns])).alias("value")]
    if len(key) == 1:
        cols.append(F.col(quote(key[0])).cast("string").alias("key"))
    elif key:
        cols.append(F.to_json(F.struct(*[F.col(quote(k)) for k in key])).alias("key"))
    return df.select(*cols)


def _records(df: DataFrame) -> Iterator[Record]:
    has_key = "key" in df.columns
    for row in df.toLocalIterator(prefetchPartitions=True):
        yield (row["key"] if has_key else None), row["value"]


def client_conf(project: Project, servers: str | None = None) -> dict[str, str]:
    """librdkafka settings of the project's ``runtime.kafka``; ``servers`` (a sink's own
    ``kafka.bootstrap.servers``) replaces its bootstrap servers."""
    kafka = project.runtime.kafka
    conf = librdkafka_options(kafka, project.root) if kafka is not None else {}
    if servers:
        conf["bootstrap.servers"] = servers
    if not conf.get("bootstrap.servers"):
        raise ValueError("no Kafka bootstrap servers")  # validation requires them before a run starts
    return conf


def topic_writer(project: Project, output: str, topic: str, servers: str | None = None) -> TopicWriter:
    """The transactional writer of one output (a model's topic, a sink) of ``project`` to ``topic``."""
    return TopicWriter.create(client_conf(project, servers), topic, f"streamt.{project.name}.{output}.{topic}")


def publish(df: DataFrame, writer: TopicWriter, key: Sequence[str], model: str) -> int:
    """Write all of ``df`` to the topic in one transaction (a snapshot, or a sink's one-shot batch)."""
    try:
        return writer.publish(_records(keyed(df, key)))
    except KafkaPublishError as exc:
        raise ModelRunError(f"model {model}: {exc}", model) from None


@dataclass(frozen=True)
class FencedBatches:
    """``foreachBatch`` function writing each micro-batch in one transaction fenced by its batch id;
    picklable, so it also runs on a Spark Connect server."""

    writer: TopicWriter
    key: tuple[str, ...]
    checkpoint: Loc
    model: str

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        fence = (query_id(self.checkpoint), batch_id)
        try:
            self.writer.publish(_records(keyed(batch, self.key)), fence=fence)
        except KafkaPublishError as exc:
            raise ModelRunError(f"model {self.model}: {exc}", self.model) from None
