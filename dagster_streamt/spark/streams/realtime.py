"""``advanced.spark.trigger: real_time``: a stream model in Spark's Real-time Mode (Spark >= 4.1).

Only ``streamt run --continuous`` starts it this way. Real-time Mode reads Kafka and writes Kafka (or a
foreach writer), in update output mode, and runs stateless queries only: so the model's query goes
straight from its Kafka sources to its topic (the record flows through long-running tasks within
milliseconds instead of waiting for a micro-batch), without the warehouse copy that micro-batch runs
write and publish from. Its checkpoint is the model's own ``<model>__realtime`` (the warehouse
stream's checkpoint belongs to a file sink): a one-shot ``streamt run`` of the model (availableNow,
into the warehouse, then published) and a real-time run keep separate positions, and a topic fed by
both gets the records of each. The trigger's interval only spaces checkpoints (Spark's default 5
minutes); a record is published when it arrives. Kafka's sink is at least once, as elsewhere.

What can be decided before Spark (a stream model, a broker, no state in the SQL) is
:func:`~..compile.modes.real_time_problem`; the inputs (Kafka sources read as streams, nothing else
streaming) are checked here, and Spark's own refusal is reported as the model's error.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from ...compile.modes import real_time_problem
from ...spec.kafka import kafka_client_options
from ...spec.models import Model
from ...spec.topics import model_topic
from ..errors import ModelRunError
from ..run.context import RunContext
from ..run.output import OUT_METRIC, schema_pairs
from ..sources.relations import register, render
from ..storage.paths import REAL_TIME_SUFFIX
from .checkpoints import explain_failure
from .kafka_publish import keyed
from .stream import StartedStream
from .topics import ensure_topic

SUFFIX = REAL_TIME_SUFFIX


def _refuse(name: str, why: str) -> ModelRunError:
    return ModelRunError(f"stream model {name}: advanced.spark.trigger real_time: {why}", name)


def start_real_time(ctx: RunContext, model: Model, trigger: dict[str, Any]) -> StartedStream:
    """Start ``model`` from its Kafka sources to its topic with ``trigger`` (``{"realTime": interval}``);
    the caller holds the model's checkpoint lock. Nothing is recorded in the warehouse."""
    name = model.name
    why = real_time_problem(ctx.project, model)
    if why is not None:
        raise _refuse(name, why)
    topic = model_topic(ctx.project, model)
    kafka = ctx.project.runtime.kafka
    if topic is None or kafka is None:  # real_time_problem checked both
        raise _refuse(name, "the model has no topic")
    rendered = render(ctx, model, "stream")
    streams = [i for i in rendered.inputs if i.mode == "stream"]
    for inp in streams:
        source = ctx.project.sources.get(inp.name) if inp.kind == "source" else None
        if source is None or source.resolved_format != "kafka":
            what = f"model {inp.name} (its stored output)" if inp.kind == "model" else \
                f"source {inp.name} ({source.resolved_format if source is not None else 'unknown'})"
            raise _refuse(name, f"it reads {what} as a stream, and Real-time Mode reads Kafka sources only")
    if not streams:
        raise _refuse(name, "it reads no streaming input (Kafka sources)")
    stats = register(ctx, rendered)
    df = ctx.spark.sql(rendered.sql)
    ensure_topic(ctx.project, model, topic)
    checkpoint = ctx.paths.checkpoint(name + SUFFIX)
    out = keyed(df.observe(OUT_METRIC, F.count(F.lit(1)).alias("rows")), model.key_columns)
    writer = (out.writeStream.format("kafka").options(**kafka_client_options(kafka, ctx.project.root))
              .option("topic", topic).queryName(f"{name}{SUFFIX}__{ctx.run_id}").outputMode("update")
              .option("checkpointLocation", str(checkpoint)).trigger(**trigger))
    try:
        query = writer.start()
    except Exception as exc:
        raise explain_failure(name, exc) from exc
    fingerprint = {"schema": [list(p) for p in schema_pairs(df.schema)], "topic": topic, "real_time": True}
    return StartedStream(query, df.schema, checkpoint, fingerprint, False, checkpoint, rendered.shown,
                         stats.resolved().quarantined)
