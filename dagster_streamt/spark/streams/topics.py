"""A stream model also writes its topic (streamt's topic and flink models do), so consumers of the
topic keep working when the project moves to Spark.

The topic gets the model's stored output, read back as a stream with a checkpoint of its own:
exactly the rows that are new since the last run, once. In local mode (``runtime.kafka.local_dir``)
a topic is a folder of JSON-lines files, written per micro-batch under names made from the batch id,
so a replayed batch replaces its files instead of adding them; with a broker, each micro-batch is
one Kafka transaction of JSON values keyed by the model's ``key:``, fenced by its batch id so that a
replay is not written twice (:mod:`.kafka_publish`), to a topic created first, as streamt creates it,
when the broker lacks it (:func:`ensure_topic`). A stream
whose result is rewritten each run (an aggregation without a window) publishes its current rows once
per run: read such a topic as an upsert stream, latest value per key.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from ...compile.modes import appends
from ...spec.base import stringify_options
from ...spec.kafka import librdkafka_options
from ...spec.models import Model
from ...spec.project import Project
from ...spec.topics import model_topic, topic_folder, topic_settings
from ..delta.delta_table import DELTA, current_commit, is_delta_table
from ..errors import ModelRunError
from ..run.context import RunContext
from ..run.output import OUT_METRIC
from ..run.progress import summarize
from ..storage.reset import publication
from .kafka_publish import FencedBatches, publish, topic_writer
from .stream import checkpoint_lock

log = logging.getLogger(__name__)


def _write_parts(df: DataFrame, folder: Path, prefix: str) -> None:
    """``df`` as JSON-lines files ``<prefix>-NNNNN.json`` in ``folder``, written in a staging folder first
    and moved in (they appear whole, never half written); a replay of the same write replaces its files."""
    written = folder.parent / f".{folder.name}.staging" / prefix
    df.write.mode("overwrite").json(str(written))
    for old in folder.glob(f"{prefix}-*.json"):
        old.unlink()
    for i, part in enumerate(sorted(written.glob("part-*.json"))):
        os.replace(part, folder / f"{prefix}-{i:05d}.json")
    shutil.rmtree(written, ignore_errors=True)
    if written.parent.is_dir() and not any(written.parent.iterdir()):
        written.parent.rmdir()


@dataclass(frozen=True)
class _TopicFiles:
    """foreachBatch writing a micro-batch into a local topic folder; picklable for Spark Connect."""

    folder: str
    query: str

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        _write_parts(batch, Path(self.folder), f"part-{self.query}-{batch_id:012d}")


def ensure_topic(project: Project, model: Model, topic: str, conf: dict[str, str] | None = None) -> None:
    """Create ``topic`` with the model's declared partitions, replication and ``config`` when the broker
    does not have it (an existing topic is left as it is): Spark's Kafka sink writes only to existing
    topics, and a broker that creates one on first write uses its own defaults. A replication above the
    cluster's brokers is clamped, with a warning naming the model, so that a one-broker development
    cluster runs a project written for production instead of failing. ``conf``: librdkafka settings with
    ``bootstrap.servers`` when not the project's ``runtime.kafka`` (a sink's own broker)."""
    from ...kafka import admin

    if conf is None:
        kafka = project.runtime.kafka
        assert kafka is not None and kafka.bootstrap_servers
        conf = librdkafka_options(kafka, project.root)
    conf = dict(conf)
    servers = conf.pop("bootstrap.servers")
    if topic in admin.list_topics(servers, conf=conf):
        return
    settings = topic_settings(project, model)
    replication = settings.replication_factor or -1  # -1: the broker's defaults
    brokers = admin.broker_count(servers, conf=conf)
    if replication > brokers:
        log.warning("model %s: topic %s is created with replication factor %d instead of the declared %d: the "
                    "cluster at %s has %d broker(s)", model.name, topic, brokers, replication, servers, brokers)
        replication = brokers
    admin.create_topic(servers, topic, settings.partitions or -1, replication, stringify_options(settings.config),
                       exist_ok=True, conf=conf)  # exist_ok: another run may create it meanwhile


def topic_query_name(model: Model) -> str:
    """The name of the checkpoint (and lock) of the query publishing ``model``'s topic."""
    return publication(model.name)


def start_topic_query(ctx: RunContext, model: Model, trigger: dict[str, Any]) -> StreamingQuery:
    """Start publishing what ``model`` (a stream model: its output grows by appends) stored and its topic
    has not had yet, with ``trigger`` (available-now for a run, processing time in continuous mode); the
    caller holds :func:`topic_query_name`'s checkpoint lock, and the model's table exists."""
    topic = model_topic(ctx.project, model)
    data = ctx.warehouse.data_dir(model.name)
    if topic is None or not appends(ctx.project, model) or not is_delta_table(data):
        raise ModelRunError(f"model {model.name}: no stored stream output to publish to a topic", model.name)
    folder = topic_folder(ctx.project, topic)
    if folder is None:
        ensure_topic(ctx.project, model, topic)
    name = topic_query_name(model)
    checkpoint = ctx.paths.checkpoint(name)
    stream = ctx.spark.readStream.format(DELTA).load(str(data)).observe(OUT_METRIC, F.count(F.lit(1)).alias("rows"))
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        writer = stream.writeStream.foreachBatch(_TopicFiles(str(folder), model.name))
    else:
        writer = stream.writeStream.foreachBatch(FencedBatches(
            topic_writer(ctx.project, model.name, topic), tuple(model.key_columns), checkpoint, model.name))
    return (writer.queryName(f"{name}__{ctx.run_id}").option("checkpointLocation", str(checkpoint))
            .trigger(**trigger).start())


def publish_topic(ctx: RunContext, model: Model) -> int | None:
    """Write what the model added this run to its topic; the number of rows published (None: no topic)."""
    topic = model_topic(ctx.project, model)
    if topic is None:
        return None
    location = ctx.warehouse.data_dir(model.name)
    current = current_commit(location)
    if current is None:
        raise ModelRunError(f"model {model.name}: nothing stored to publish to topic {topic}", model.name)
    if not appends(ctx.project, model):  # the whole current result, once per run
        folder = topic_folder(ctx.project, topic)
        if folder is None:
            ensure_topic(ctx.project, model, topic)
        df = ctx.spark.read.format(DELTA).option("versionAsOf", current.version).load(str(location))
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            _write_parts(df, folder, f"snapshot-{model.name}-v{current.version}")  # each Delta version once
            return df.count()
        return publish(df, topic_writer(ctx.project, model.name, topic), model.key_columns, model.name)
    with checkpoint_lock(ctx, topic_query_name(model), "topic publication"):
        query = start_topic_query(ctx, model, {"availableNow": True})
        query.awaitTermination()
    return summarize(query.recentProgress, OUT_METRIC).rows_written
