"""``materialized: stream``: Structured Streaming into ``<warehouse>/<model>/data``.

``trigger(availableNow=True)`` by default: each run processes exactly the data that arrived since the
last one and stops, so schedules and sensors drive streams like batch jobs. The output is a Delta table
(Delta's streaming sink: one commit per micro-batch, recorded with the query id and batch id, so a
replayed batch is skipped); with the checkpoint that makes the output exactly-once across reruns and
crashes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from ...compile.modes import recomputed, stream_output_mode
from ...core.results import ModelResult
from ...spec.models import Model
from ..delta.delta_table import DELTA, current_commit, keep_change_feed
from ..errors import ModelRunError
from ..run.context import RunContext
from ..run.live import await_query
from ..run.output import OUT_METRIC, schema_pairs
from ..run.progress import summarize, trigger_options
from ..sources.relations import register, render
from ..storage.locks import FileLock
from ..storage.object_lock import ObjectLock, lock_at
from ..storage.reset import local_topic, reset_model
from ..storage.store import Loc
from ..storage.warehouse import Warehouse
from .checkpoints import check_fingerprint, explain_failure, save_fingerprint


def checkpoint_lock(ctx: RunContext, name: str, what: str = "stream model") -> FileLock | ObjectLock:
    return lock_at(ctx.paths.checkpoint_lock(name), model=name, busy_message=(
        f"{what} {name} is already running in another run or process, and two writers on one checkpoint "
        "would corrupt it; wait for that run to finish (or stop it) and run again"))


@dataclass(frozen=True)
class _CompleteBatch:
    """foreachBatch for ``output_mode: complete``: every batch is the whole result, one overwrite commit;
    Delta skips a replayed batch (same app id and version)."""

    warehouse: Loc  # picklable (Spark Connect runs this in the server's Python)
    model: str
    partition_by: tuple[str, ...] = ()

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        writer = batch.write.format(DELTA).mode("overwrite").option("overwriteSchema", "true")
        writer = writer.option("txnAppId", f"streamt-{self.model}").option("txnVersion", str(batch_id))
        if self.partition_by:
            writer = writer.partitionBy(*self.partition_by)
        writer.save(str(Warehouse(self.warehouse).data_dir(self.model)))


@dataclass(frozen=True)
class StartedStream:
    """A stream model's started query and what :func:`record_stream` records once it has run."""

    query: StreamingQuery
    schema: StructType
    checkpoint: Loc
    fingerprint: dict[str, Any]
    appends: bool  # its rows are appended to its table (readers may follow it as a stream), not replaced whole
    location: Loc
    sql: str
    quarantined: int


def output_mode(ctx: RunContext, model: Model) -> str:
    mode = stream_output_mode(ctx.project, model)
    if mode == "update":
        raise ModelRunError(f"stream model {model.name}: output_mode update is not supported for a stream model's "
                            "own table; use append (with a watermark for aggregations) or complete (rewrites the "
                            "whole result each run), make it `materialized: table` (a rerun merges the new rows' "
                            "aggregation into its stored state), or export it with a sink that has a `key:` (its "
                            "changed rows are upserted per micro-batch)", model.name)
    return mode


def start_stream(ctx: RunContext, model: Model, trigger: dict[str, Any]) -> StartedStream:
    """Build the model's query and start it with ``trigger``; the caller holds :func:`checkpoint_lock`.

    Shared by available-now runs and continuous mode, so both check the same fingerprint and write
    the same checkpoint and output layout: either may resume where the other stopped.
    """
    name = model.name
    adv = model.advanced.spark
    mode = output_mode(ctx, model)
    checkpoint = ctx.paths.checkpoint(name)
    rendered = render(ctx, model, "stream")
    stats = register(ctx, rendered)
    df = ctx.spark.sql(rendered.sql)
    if not df.isStreaming:
        raise ModelRunError(f"stream model {name} reads no streaming input (only tables, views or batch-only "
                            "sources); make it `materialized: table`", name)
    fingerprint = {"schema": [list(p) for p in schema_pairs(df.schema)],
                   "inputs": sorted(f"{i.kind}:{i.name}" for i in rendered.inputs if i.mode == "stream"),
                   "output_mode": mode, "format": DELTA}
    check_fingerprint(checkpoint, name, fingerprint)
    writer = (df.observe(OUT_METRIC, F.count(F.lit(1)).alias("rows")).writeStream
              .queryName(f"{name}__{ctx.run_id}").outputMode(mode)
              .option("checkpointLocation", str(checkpoint)).trigger(**trigger))
    data = ctx.warehouse.data_dir(name)
    if mode == "append":
        data.mkdir(parents=True, exist_ok=True)
        keep_change_feed(ctx.spark, data)  # a new table gets one from the session's defaults
        writer = writer.format(DELTA).option("path", str(data))
        if adv.partition_by:
            writer = writer.partitionBy(*adv.partition_by)
    else:
        writer = writer.foreachBatch(_CompleteBatch(ctx.warehouse.root, name, tuple(adv.partition_by)))
    try:
        query = writer.start()
    except Exception as exc:
        raise explain_failure(name, exc) from exc
    return StartedStream(query, df.schema, checkpoint, fingerprint, mode == "append", data, rendered.shown,
                         stats.resolved().quarantined)


def record_stream(started: StartedStream) -> None:
    """Remember the query shape for the next fingerprint check (the caller holds the checkpoint lock);
    what the output holds is its Delta log's to say."""
    save_fingerprint(started.checkpoint, started.fingerprint)


def materialize_stream(ctx: RunContext, model: Model, full_refresh: bool = False) -> ModelResult:
    if recomputed(ctx.project, model):  # window functions Spark cannot stream: a table recomputed each run
        from ..tables.table import materialize_table

        return materialize_table(ctx, model, full_refresh)
    start = time.monotonic()
    name = model.name
    output_mode(ctx, model)
    trigger = trigger_options(model.advanced.spark.trigger, name)
    if "processingTime" in trigger:  # an interval paces continuous mode; a run processes what is there and ends
        # (trigger_options already gives a real_time model availableNow here: Real-time Mode is --continuous only)
        trigger = {"availableNow": True}
    with checkpoint_lock(ctx, name):
        if full_refresh:
            reset_model(ctx.paths, name, local_topic(ctx.project, model))
        started = start_stream(ctx, model, trigger)
        query = started.query
        try:
            await_query(ctx.spark, query, name)
        except Exception as exc:
            raise explain_failure(name, exc) from exc
        record_stream(started)
        location = started.location
        commit = current_commit(location)  # the version this run's batches made (the lock keeps others out)
    s = summarize(query.recentProgress, OUT_METRIC)
    return ModelResult(
        model=name, materialized="stream", status="success", rows_written=s.rows_written, input_rows=s.input_rows,
        table_rows=commit.rows if commit is not None else None,
        batches=s.batches, duration_s=time.monotonic() - start, schema=schema_pairs(started.schema),
        location=str(location), last_watermark=s.last_watermark, input_rows_per_second=s.input_rows_per_second,
        processed_rows_per_second=s.processed_rows_per_second, quarantined_rows=started.quarantined,
        arrival_lag_s=s.arrival_lag_s, delta_version=commit.version if commit is not None else None,
        sql=started.sql)
