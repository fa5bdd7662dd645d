"""``materialized: sink``: write a model's rows to an external system (files, JDBC, Kafka).

After every run the export holds exactly the model's current data (see sink_modes.py for the modes).
Batch when the input is stored (a table or view): the whole snapshot is published at once, atomically
(file exports swap a versioned folder locally and replace a manifest on an object store, JDBC commits one
transaction). Streaming when it reads a stream
model: each micro-batch is published at once together with its batch id, so a batch Spark replays
after a crash is recognised and never written twice.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import reduce
from pathlib import Path

from pyspark.sql import DataFrame, Observation, Window
from pyspark.sql import functions as F

from ...compile.modes import appends
from ...core.object_stores import is_object_uri
from ...core.results import ModelResult
from ...kafka.transactions import TopicWriter
from ...spec.connectors import sink_target
from ...spec.kafka import kafka_client_options
from ...spec.models import FILE_FORMATS, Model, SinkConfig
from ...spec.topics import local_dir
from ...sql.identifiers import quote
from ..errors import ModelRunError
from ..run.context import RunContext
from ..run.live import await_query
from ..run.output import OUT_METRIC, format_options, schema_pairs
from ..run.progress import summarize, trigger_options
from ..sources.relations import Rendered, register, render
from ..storage.object_lock import lock_at
from ..storage.reset import reset_model
from ..storage.store import Loc, ObjectPath, StoreOptions, write_text
from ..streams.checkpoints import explain_failure, query_id
from ..streams.kafka_publish import FencedBatches, client_conf, publish, topic_writer
from ..streams.stream import checkpoint_lock
from ..streams.topics import ensure_topic
from . import delta_sink
from .export_files import FileExport, Version, export_folder, link_files, rename_parts
from .jdbc_sink import JdbcTarget, already_written, publish_batch, publish_snapshot
from .jdbc_tx import Table, has_python_driver
from .object_export import ObjectExport, ObjectVersion, export_store
from .sink_modes import SinkPlan, check_key_columns, plan_sink

RANK = "__streamt_rank"
COMMITS = "_streamt_sink_commits.json"  # last batch id written by a sink without transactions (Kafka)


@dataclass(frozen=True)
class Target:
    format: str
    options: dict[str, str]
    path: str | None  # file targets
    location: str  # shown to users (no credentials)
    model: str = ""
    plan: SinkPlan | None = None
    order: str | None = None  # column that picks the latest row among rows sharing a key
    store: StoreOptions | None = None  # how Python reaches a file export on an object store

    @property
    def files(self) -> bool:
        return self.format in FILE_FORMATS and self.path is not None

    def export(self) -> FileExport | ObjectExport:
        """A file export's versions: a versioned folder locally, a manifest on an object store."""
        assert self.path is not None
        if self.store is not None:
            return ObjectExport(ObjectPath(self.path, self.store), self.model)
        return FileExport(Path(self.path), self.model)

    def jdbc(self) -> JdbcTarget:
        assert self.plan is not None
        return JdbcTarget(self.model, self.options, Table.parse(self.options["dbtable"], self.model),
                          self.plan.mode, self.plan.key)


def _target(ctx: RunContext, model: Model, sink: SinkConfig) -> Target:
    resolved = sink_target(sink, model.name, local_dir(ctx.project))
    if resolved.error is not None:
        raise ModelRunError(f"sink {model.name}: {resolved.error}", model.name)
    fmt = resolved.format
    options = dict(resolved.options)
    if fmt in FILE_FORMATS or fmt == "delta":
        if not resolved.path:
            raise ModelRunError(f"sink {model.name}: a {fmt} sink needs `sink.path:` (a folder, relative to the "
                                "project)", model.name)
        options.update({k: v for k, v in format_options(fmt).items() if k not in options})
        if is_object_uri(resolved.path):
            uri = resolved.path.rstrip("/")
            store = export_store(ctx.project.runtime.spark.conf, options) if fmt != "delta" else None
            return Target(fmt, options, uri, uri, model.name, store=store)
        folder = export_folder(ctx.project.resolve_path(resolved.path))
        return Target(fmt, options, str(folder), str(folder), model.name)
    if fmt == "jdbc":
        missing = [k for k in ("url", "dbtable") if k not in options]
        if missing:
            raise ModelRunError(f"sink {model.name}: a jdbc sink needs `sink.options` {', '.join(missing)} "
                                "(and usually user, password, driver)", model.name)
        url = re.sub(r"[?;].*$", "", options["url"])  # drop parameters, which may hold a password
        return Target(fmt, options, None, f"{url} table {options['dbtable']}", model.name)
    if fmt == "kafka":
        kafka = ctx.project.runtime.kafka
        if kafka is not None:
            options = {**kafka_client_options(kafka, ctx.project.root), **options}
        topic = options.get("topic") or str(sink.config.get("topic", "") or "") or model.name
        options["topic"] = topic
        return Target(fmt, options, None, f"kafka://{options.get('kafka.bootstrap.servers', '?')}/{topic}",
                      model.name)
    path = resolved.path if resolved.path and "://" in resolved.path else \
        (resolved.path and str(ctx.project.resolve_path(resolved.path)))
    return Target(fmt, options, path, f"{fmt} sink", model.name)


# -- one write: de-duplicated by key, counted, checked before it is published ---------------------------
@dataclass
class Prepared:
    df: DataFrame
    obs: Observation
    target: Target

    def metric(self, name: str) -> int:
        return int(self.obs.get.get(name) or 0)

    def verify(self) -> None:
        """Raise before publishing when the rows cannot be keyed (runs after the write's action)."""
        key = self.target.plan.key if self.target.plan else ()
        if not key:
            return
        nulls, dupes = self.metric("null_keys"), self.metric("superseded")
        if nulls:
            raise ModelRunError(f"sink {self.target.model}: {nulls} row(s) have a null in key column(s) "
                                f"{', '.join(key)}; filter them out or fix the key (nothing was published)",
                                self.target.model)
        if dupes and self.target.order is None:
            raise ModelRunError(f"sink {self.target.model}: {dupes} row(s) share a key ({', '.join(key)}) with "
                                "another row of the same write and nothing says which is the latest; declare "
                                "`event_time:` on the model (the latest row wins) or make the key unique "
                                "(nothing was published)", self.target.model)

    @property
    def rows(self) -> int | None:
        """Rows written; None when the write returned no count (unknown, not 0)."""
        if self.obs.get.get("rows") is None:
            return None
        return self.metric("rows") - self.metric("superseded")


def prepare(df: DataFrame, target: Target) -> Prepared:
    obs = Observation(f"streamt_sink_{target.model}_{uuid.uuid4().hex[:12]}")
    metrics = [F.count(F.lit(1)).alias("rows")]
    key = target.plan.key if target.plan else ()
    if not key:
        return Prepared(df.observe(obs, *metrics), obs, target)
    null_key = reduce(lambda a, b: a | b, [F.col(quote(k)).isNull() for k in key])
    order = [F.col(quote(target.order)).desc()] if target.order else [F.col(quote(k)) for k in key]
    ranked = df.withColumn(RANK, F.row_number().over(Window.partitionBy(*[F.col(quote(k)) for k in key])
                                                     .orderBy(*order)))
    metrics += [F.count(F.when(null_key, 1)).alias("null_keys"),
                F.count(F.when(F.col(RANK) > 1, 1)).alias("superseded")]
    return Prepared(ranked.observe(obs, *metrics).filter(F.col(RANK) == 1).drop(RANK), obs, target)


def _write_files(df: DataFrame, target: Target, folder: Path | ObjectPath) -> None:
    # "error", not "errorifexists": the Spark Connect client knows only the short name
    df.write.format(target.format).options(**target.options).mode("error").save(str(folder))


def _latest_per_key(new: DataFrame, current: Version | ObjectVersion | None, target: Target) -> DataFrame:
    """The current export's rows whose key is not in ``new``, plus ``new``: an upsert of files."""
    if current is None:
        return new
    key = target.plan.key if target.plan else ()
    paths = list(current.files) if isinstance(current, ObjectVersion) else str(current.path)
    old = new.sparkSession.read.format(target.format).options(**target.options).schema(new.schema).load(paths)
    return old.join(new.select(*key), list(key), "left_anti").unionByName(new)


Build = Callable[[Path | ObjectPath, Version | ObjectVersion | None], None]


def _file_build(prepared: Prepared, batch: tuple[str, int] | None = None) -> Build:
    """How a file export's next version is built: the rows written, with the current version's rows of
    the keys not written again (upsert) or its files (append: history; hard-linked locally, listed again
    by an object store's manifest). ``batch``: (query id, batch id) of a micro-batch. A version of this
    checkpoint (or an export adopted from before versions) carries on; after a full refresh the query id
    differs and the export starts over. Locally its part files are named after the batch, so that a replay
    of it replaces them."""
    target = prepared.target
    assert target.plan is not None
    mode = target.plan.mode
    prefix = f"part-b{batch[1]:012d}-" if batch is not None else None

    def build(folder: Path | ObjectPath, current: Version | ObjectVersion | None) -> None:
        if batch is not None and isinstance(current, Version) and current.query != batch[0][:8] \
                and not current.path.name.endswith("-adopted"):
            current = None
        _write_files(_latest_per_key(prepared.df, current, target) if mode == "upsert" else prepared.df,
                     target, folder)
        prepared.verify()
        if mode == "append" and isinstance(folder, Path) and not isinstance(current, ObjectVersion):
            if prefix is not None:
                rename_parts(folder, prefix)
            link_files(current.path if current else None, folder,
                       skip=lambda name: prefix is not None and name.startswith(prefix))

    return build


def _save(df: DataFrame, target: Target, mode: str) -> None:
    df.write.format(target.format).options(**target.options).mode(mode).save(target.path or None)


def _write_snapshot(ctx: RunContext, prepared: Prepared) -> None:
    target = prepared.target
    assert target.plan is not None
    if target.files:
        _publish_files(target, _file_build(prepared))
    elif target.format == "jdbc" and target.plan.mode == "append" and not has_python_driver(target.options):
        _save(prepared.df, target, "append")  # a database streamt has no Python driver for: Spark's writer
        prepared.verify()
    elif target.format == "jdbc":
        publish_snapshot(prepared.df, target.jdbc(), prepared.verify)
    elif target.format == "delta":  # one Delta commit: overwrite, append or MERGE on the key
        assert target.path is not None
        scratch = ctx.warehouse.model_dir(target.model) / f".scratch-{ctx.run_id}"
        delta_sink.publish(prepared.df, target.path, target.plan.mode, target.plan.key, prepared.verify, scratch,
                           observed=ctx.observed)
    else:
        _save(prepared.df, target, "overwrite" if target.plan.mode == "replace" else "append")
        prepared.verify()


def _publish_files(target: Target, build: Build, query: str | None = None, batch: int | None = None) -> None:
    export = target.export()
    if isinstance(export, ObjectExport):
        assert target.plan is not None
        export.publish(build, query, batch, append=target.plan.mode == "append")
    else:
        export.publish(build, query, batch)


# -- streaming: one publish per micro-batch ------------------------------------------------------------
def _last_commit(path: Loc) -> int | None:
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["last_batch_id"])
    except (FileNotFoundError, KeyError, ValueError):
        return None


@dataclass(frozen=True)
class _SinkBatch:
    """foreachBatch function; picklable so it also runs on a Spark Connect server."""

    target: Target
    checkpoint: Loc

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        target = self.target
        query = query_id(self.checkpoint)
        if target.format == "jdbc":
            jdbc = target.jdbc()
            if not already_written(jdbc, query, batch_id):
                prepared = prepare(batch, target)
                publish_batch(prepared.df, jdbc, query, batch_id, prepared.verify)
        elif target.files:
            current = target.export().current()
            if current is not None and current.query == query[:8] and current.batch is not None \
                    and batch_id <= current.batch:
                return  # Spark replayed a batch the export already holds
            _publish_files(target, _file_build(prepare(batch, target), (query, batch_id)), query, batch_id)
        elif target.format == "delta":  # Delta skips a replayed append itself (txnAppId + txnVersion)
            assert target.path is not None and target.plan is not None
            prepared = prepare(batch, target)
            delta_sink.publish(prepared.df, target.path, target.plan.mode, target.plan.key, prepared.verify,
                               self.checkpoint / f".scratch-{batch_id}", (f"streamt-{query}", batch_id))
        else:  # other formats: no transaction to join, so the batch id is recorded after the write
            commits = self.checkpoint / COMMITS
            last = _last_commit(commits)
            if last is not None and batch_id <= last:
                return  # Spark replayed a batch this sink already wrote
            prepared = prepare(batch, target)
            _save(prepared.df, target, "append")
            prepared.verify()
            write_text(commits, json.dumps({"last_batch_id": batch_id}), durable=True)


def _template(model: Model) -> str:
    template = model.sql_template
    if template is None:
        raise ModelRunError(f"sink {model.name} needs `from:` (the model to write out) or `sql:`", model.name)
    return template


def _reads_stream(ctx: RunContext, rendered: Rendered) -> bool:
    ups = (ctx.project.models.get(inp.name) for inp in rendered.inputs if inp.kind == "model")
    return any(up is not None and appends(ctx.project, up) for up in ups)


def _order_column(ctx: RunContext, model: Model, rendered: Rendered, columns: list[str]) -> str | None:
    """The event-time column (the sink's own, else an input's) when the output has it."""
    nodes = [(ctx.project.models if inp.kind == "model" else ctx.project.sources).get(inp.name)
             for inp in rendered.inputs]
    candidates = [model.event_time, *(node.event_time for node in nodes if node is not None)]
    return next((et.column for et in candidates if et is not None and et.column in columns), None)


def _kafka_writer(ctx: RunContext, model: Model, target: Target) -> TopicWriter:
    """The sink's topic, created as a model's topic is when the broker lacks it, and its writer."""
    topic, servers = target.options["topic"], target.options.get("kafka.bootstrap.servers")
    try:
        conf = client_conf(ctx.project, servers)
    except ValueError:
        raise ModelRunError(f"sink {model.name}: a kafka sink needs a broker: `runtime.kafka.bootstrap_servers` or "
                            "the sink's `options: {kafka.bootstrap.servers: host:port}`", model.name) from None
    ensure_topic(ctx.project, model, topic, conf)
    return topic_writer(ctx.project, model.name, topic, servers)


def materialize_sink(ctx: RunContext, model: Model, full_refresh: bool = False) -> ModelResult:
    start = time.monotonic()
    sink = model.sink_config
    if sink is None:
        raise ModelRunError(f"sink {model.name} needs a `sink:` block (format and path or options, or streamt's "
                            "`connector:`)", model.name)
    target = _target(ctx, model, sink)
    template = _template(model)
    rendered = render(ctx, model, "batch", template)
    incremental = _reads_stream(ctx, rendered)
    plan = plan_sink(ctx.project, model, incremental)
    target = replace(target, plan=plan)
    if incremental:
        return _stream_sink(ctx, model, target, template, full_refresh, start)
    # One run at a time publishes this sink; a concurrent run waits, then publishes its own snapshot.
    with lock_at(ctx.paths.checkpoint_lock(model.name), wait=True, model=model.name):
        stats = register(ctx, rendered)
        df = ctx.spark.sql(rendered.sql)
        assert target.plan is not None
        check_key_columns(ctx.project, model, target.plan.key, df.columns)
        target = replace(target, order=_order_column(ctx, model, rendered, df.columns))
        if target.format == "kafka":  # a log: every row is a message, all of them in one transaction
            rows: int | None = publish(df, _kafka_writer(ctx, model, target), plan.key, model.name)
        else:
            prepared = prepare(df, target)
            _write_snapshot(ctx, prepared)
            rows = prepared.rows
    size = rows if plan.mode == "replace" else None  # the target holds just this run's rows
    return ModelResult(model=model.name, materialized="sink", status="success", rows_written=rows,
                       table_rows=size, input_rows=stats.rows, duration_s=time.monotonic() - start,
                       schema=schema_pairs(df.schema), location=target.location,
                       quarantined_rows=stats.resolved().quarantined, sql=rendered.shown)


def _stream_sink(ctx: RunContext, model: Model, target: Target, template: str, full_refresh: bool,
                 start: float) -> ModelResult:
    name = model.name
    checkpoint = ctx.paths.checkpoint(name)
    plan = target.plan
    assert plan is not None
    with checkpoint_lock(ctx, name, "streaming sink"):
        if full_refresh:
            reset_model(ctx.paths, name)
        rendered = render(ctx, model, "stream", template)
        stats = register(ctx, rendered)
        df = ctx.spark.sql(rendered.sql)
        check_key_columns(ctx.project, model, plan.key, df.columns)
        target = replace(target, order=_order_column(ctx, model, rendered, df.columns))
        out = df.observe(OUT_METRIC, F.count(F.lit(1)).alias("rows"))
        checkpoint.mkdir(parents=True, exist_ok=True)
        batches: Callable[[DataFrame, int], None] = _SinkBatch(target, checkpoint)
        if target.format == "kafka":
            batches = FencedBatches(_kafka_writer(ctx, model, target), plan.key, checkpoint, name)
        writer = out.writeStream.queryName(f"{name}__{ctx.run_id}").foreachBatch(batches)
        if plan.mode == "upsert":
            writer = writer.outputMode("update")  # changed groups of an aggregate are upserted by key
        try:
            query = (writer.option("checkpointLocation", str(checkpoint))
                     .trigger(**trigger_options(model.advanced.spark.trigger, name)).start())
            await_query(ctx.spark, query, name)
        except Exception as exc:
            raise explain_failure(name, exc) from exc
    s = summarize(query.recentProgress, OUT_METRIC)
    return ModelResult(
        model=name, materialized="sink", status="success", rows_written=s.rows_written, input_rows=s.input_rows,
        batches=s.batches, duration_s=time.monotonic() - start, schema=schema_pairs(df.schema),
        location=target.location, last_watermark=s.last_watermark, input_rows_per_second=s.input_rows_per_second,
        processed_rows_per_second=s.processed_rows_per_second, quarantined_rows=stats.resolved().quarantined,
        sql=rendered.shown)
