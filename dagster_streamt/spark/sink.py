"""``materialized: sink``: write a model's rows to an external system (files, JDBC, Kafka).

Batch when its input is stored (a table or view); streaming when it reads a stream model. A
streaming sink writes each micro-batch with foreachBatch and records the committed batch id, so a
batch Spark replays after a crash is not written twice (file targets are exactly-once; a JDBC write
that crashes between commit and record can repeat that one batch).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..spec.models import FILE_FORMATS, Model, SinkConfig
from .checkpoints import explain_failure
from .context import RunContext
from .errors import ModelRunError
from .output import OUT_METRIC, counted, observed_rows, schema_pairs
from .progress import summarize, trigger_options
from .relations import Rendered, register, render
from .reset import reset_model
from .results import ModelResult
from .stream import checkpoint_lock

COMMITS = "_streamt_sink_commits.json"


@dataclass(frozen=True)
class Target:
    format: str
    options: dict[str, str]
    path: str | None  # file targets
    location: str  # shown to users (no credentials)


def _target(ctx: RunContext, model: Model, sink: SinkConfig) -> Target:
    fmt = sink.format
    options = dict(sink.options)
    if fmt in FILE_FORMATS or fmt == "delta":
        if not sink.path:
            raise ModelRunError(f"sink {model.name}: a {fmt} sink needs `sink.path:` (a folder, relative to the "
                                "project)", model.name)
        path = ctx.project.resolve_path(sink.path).resolve()
        if fmt == "csv":
            options.setdefault("header", "true")
        return Target(fmt, options, str(path), str(path))
    if fmt == "jdbc":
        missing = [k for k in ("url", "dbtable") if k not in options]
        if missing:
            raise ModelRunError(f"sink {model.name}: a jdbc sink needs `sink.options` {', '.join(missing)} "
                                "(and usually user, password, driver)", model.name)
        url = re.sub(r"[?;].*$", "", options["url"])  # drop parameters, which may hold a password
        return Target(fmt, options, None, f"{url} table {options['dbtable']}")
    if fmt == "kafka":
        kafka = ctx.project.runtime.kafka
        if kafka is not None:
            options.setdefault("kafka.bootstrap.servers", kafka.bootstrap_servers)
        topic = options.get("topic") or str(sink.config.get("topic", "") or "") or model.name
        options["topic"] = topic
        return Target(fmt, options, None, f"kafka://{options.get('kafka.bootstrap.servers', '?')}/{topic}")
    return Target(fmt, options, sink.path and str(ctx.project.resolve_path(sink.path)), f"{fmt} sink")


def _kafka_payload(df: DataFrame) -> DataFrame:
    """Kafka takes a ``value`` (and optional ``key``) column; other shapes are sent as JSON values."""
    if "value" in df.columns:
        return df
    return df.select(F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns])).alias("value"))


def _last_commit(path: Path) -> int | None:
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["last_batch_id"])
    except (FileNotFoundError, KeyError, ValueError):
        return None


def _record_commit(path: Path, batch_id: int) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"last_batch_id": batch_id}), encoding="utf-8")
    os.replace(tmp, path)


def write_file_batch(batch: DataFrame, target: Target, batch_id: int) -> None:
    """Write one micro-batch as files named after the batch id: a replay replaces, never duplicates."""
    assert target.path is not None
    folder = Path(target.path)
    staging = folder / "_staging" / f"batch={batch_id}"
    shutil.rmtree(staging, ignore_errors=True)
    batch.write.format(target.format).options(**target.options).mode("overwrite").save(str(staging))
    prefix = f"part-b{batch_id:012d}-"
    for old in folder.glob(prefix + "*"):
        old.unlink()
    for i, part in enumerate(sorted(staging.glob("part-*"))):
        os.replace(part, folder / f"{prefix}{i:05d}{part.name[part.name.index('.'):]}")
    shutil.rmtree(staging, ignore_errors=True)


@dataclass(frozen=True)
class _SinkBatch:
    """foreachBatch function; picklable so it also runs on a Spark Connect server."""

    target: Target
    commits: str
    file_target: bool = False

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        commits = Path(self.commits)
        last = _last_commit(commits)
        if last is not None and batch_id <= last:
            return  # Spark replayed a batch this sink already wrote
        if self.file_target:
            write_file_batch(batch, self.target, batch_id)
        else:
            batch.write.format(self.target.format).options(**self.target.options).mode("append").save()
        _record_commit(commits, batch_id)


def _template(model: Model) -> str:
    if model.sql:
        return model.sql
    if model.from_:
        return f'SELECT * FROM {{{{ ref("{model.from_}") }}}}'
    raise ModelRunError(f"sink {model.name} needs `from:` (the model to write out) or `sql:`", model.name)


def _reads_stream(ctx: RunContext, rendered: Rendered) -> bool:
    for inp in rendered.inputs:
        up = ctx.project.models.get(inp.name) if inp.kind == "model" else None
        if up is not None and up.materialized == "stream" and (up.advanced.spark.output_mode or "append") == "append":
            return True
    return False


def materialize_sink(ctx: RunContext, model: Model, full_refresh: bool = False) -> ModelResult:
    start = time.monotonic()
    if model.sink is None:
        raise ModelRunError(f"sink {model.name} needs a `sink:` block (format and path or options)", model.name)
    target = _target(ctx, model, model.sink)
    template = _template(model)
    rendered = render(ctx, model, "batch", template)
    if _reads_stream(ctx, rendered):
        return _stream_sink(ctx, model, target, template, full_refresh, start)
    stats = register(ctx, rendered)
    df = ctx.spark.sql(rendered.sql)
    out, obs = counted(df, f"streamt_sink_{model.name}_{ctx.run_id}")
    if target.format == "kafka":
        out = _kafka_payload(out)
    writer = out.write.format(target.format).options(**target.options).mode(model.sink.mode)
    if target.path:
        writer.save(target.path)
    else:
        writer.save()
    return ModelResult(model=model.name, materialized="sink", status="success", rows_written=observed_rows(obs),
                       input_rows=stats.rows, duration_s=time.monotonic() - start, schema=schema_pairs(df.schema),
                       location=target.location, quarantined_rows=stats.quarantined, sql=rendered.sql)


def _stream_sink(ctx: RunContext, model: Model, target: Target, template: str, full_refresh: bool,
                 start: float) -> ModelResult:
    name = model.name
    checkpoint = ctx.paths.checkpoint(name)
    with checkpoint_lock(ctx, name, "streaming sink"):
        if full_refresh:
            reset_model(ctx.paths, name)
        rendered = render(ctx, model, "stream", template)
        stats = register(ctx, rendered)
        df = ctx.spark.sql(rendered.sql)
        out = df.observe(OUT_METRIC, F.count(F.lit(1)).alias("rows"))
        if target.format == "kafka":
            out = _kafka_payload(out)
        checkpoint.mkdir(parents=True, exist_ok=True)
        if target.path:
            Path(target.path).mkdir(parents=True, exist_ok=True)
        batch_fn = _SinkBatch(target, str(checkpoint / COMMITS), target.path is not None)
        try:
            query = (out.writeStream.queryName(f"{name}__{ctx.run_id}").foreachBatch(batch_fn)
                     .option("checkpointLocation", str(checkpoint))
                     .trigger(**trigger_options(model.advanced.spark.trigger, name)).start())
            query.awaitTermination()
        except Exception as exc:
            raise explain_failure(name, exc) from exc
    s = summarize(query.recentProgress, OUT_METRIC)
    return ModelResult(
        model=name, materialized="sink", status="success", rows_written=s.rows_written, input_rows=s.input_rows,
        batches=s.batches, duration_s=time.monotonic() - start, schema=schema_pairs(df.schema),
        location=target.location, last_watermark=s.last_watermark, input_rows_per_second=s.input_rows_per_second,
        processed_rows_per_second=s.processed_rows_per_second, quarantined_rows=stats.quarantined, sql=rendered.sql)
