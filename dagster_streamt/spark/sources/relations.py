"""What a model's ``ref()``/``source()`` render to, and registering those temporary views.

Each input becomes a session temporary view: ``orders_raw`` when read in batch, ``orders_raw__stream``
when read as a stream, so batch and streaming models can share one session. Stored models are read
from their Delta tables (the version the run saw), so any model can run alone; a view is rendered again
from the project.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...compile.compiled import bind
from ...compile.modes import appends
from ...compile.render import RenderError, render_calls, render_once
from ...spec.models import FILE_FORMATS, Model
from ...spec.names import safe_identifier
from ...spec.project import Project
from ...sql import parse_query, whole_scans
from ...sql.flink import Translation, TranslationError, translate
from ...sql.flink_types import Catalog
from ..delta.delta_table import DELTA, Appended, is_delta_table, read_appended
from ..errors import ModelRunError
from ..run.context import RunContext
from ..run.partitions import KEY_COLUMN, signature
from ..storage.store import Loc
from .inputs import DEFAULT_DELAY, Input, InputStats, Mode, Rendered, counted_stream, quote, watermarked
from .snapshots import model_version
from .source_views import register_source, valid_batch_rows
from .sources import PERMISSIVE, can_stream


def _event_time(project: Project, kind: str, name: str) -> tuple[str, str] | None:
    """(column, delay) of a source's or model's event time; a column without a watermark gets streamt's
    default bound (5 s of out-of-orderness). A model inherits the event time of the input it passes on."""
    if kind == "source":
        source = project.sources[name]
        if source.event_time is None:
            return None
        return source.event_time.column, source.watermark_delay or DEFAULT_DELAY
    model = project.models[name]
    if model.event_time is not None:
        return model.event_time.column, model.watermark_delay or DEFAULT_DELAY
    column = project.event_columns.get(name)
    return (column, model.watermark_delay or DEFAULT_DELAY) if column else None


def _plan_input(ctx: RunContext, consumer: Model, kind: str, name: str, mode: Mode) -> Input | str:
    """The Input for one ``ref``/``source`` call, or a problem message."""
    project = ctx.project
    view = safe_identifier(name)
    if kind == "source":
        source = project.sources.get(name)
        if source is None:
            return f"model {consumer.name} reads unknown source {name!r}"
        streams = mode == "stream" and can_stream(source)
    else:
        up = project.models.get(name)
        if up is None:
            return f"model {consumer.name} reads unknown model {name!r}"
        if up.materialized == "sink":
            return (f"model {consumer.name} reads {name}, a sink: sinks write to external systems and cannot be "
                    f"read; ref the sink's input model instead")
        scope = ctx.partition
        if scope is not None and consumer.partitioned_by is not None and up.partitioned_by is not None \
                and signature(up.partitioned_by) == scope.signature:  # same partitions: read the run's window
            return Input(kind, name, "batch", f"{view}__window", keys=scope.keys)
        streams = mode == "stream" and (appends(project, up) or up.materialized == "view")
    if not streams:
        return Input(kind, name, "batch", view)
    event = _event_time(project, kind, name)
    if event is not None:
        return Input(kind, name, "stream", f"{view}__stream", event)
    own = consumer.event_time
    if own and own.watermark_delay:
        return Input(kind, name, "stream", f"{view}__stream__wm_{safe_identifier(consumer.name)}",
                     (own.column, own.watermark_delay), own_watermark=False)
    return Input(kind, name, "stream", f"{view}__stream")


def render(ctx: RunContext, model: Model, mode: Mode, template: str | None = None, whole: bool = False,
           deltas: Mapping[tuple[str, str], tuple[str, ...] | Appended] | None = None) -> Rendered:
    """Render the model's SQL so each input reads the view this run registers for it; Flink SQL is
    translated for Spark. The versioned side of a temporal join is read as it is now (batch).
    ``whole``: the caller's action writes every row of the result (a table), so a batch source the
    query reads whole has its rows counted by that scan (a view of the model's own).
    ``deltas``: (kind, name) -> a source's files or a table's appended versions: that input reads only
    those (an incremental refresh)."""
    if deltas:
        rendered = _render(ctx, model, mode, template, frozenset(), (), deltas=deltas)[0]
        capture = _capturable(ctx, rendered) if whole else frozenset()
        return _render(ctx, model, mode, template, frozenset(), (), capture, deltas)[0] if capture else rendered
    rendered, translation = _render(ctx, model, mode, template, frozenset(), ())
    if mode != "stream":
        if whole:
            capture = _capturable(ctx, rendered)
            if capture:
                rendered, _ = _render(ctx, model, mode, template, frozenset(), (), capture)
        return rendered
    static = frozenset((i.kind, i.name) for i in rendered.inputs
                       if i.view in translation.static_tables and i.mode == "stream")
    windows = tuple(c.split(".")[-1] for c in translation.window_columns)
    if static or (windows and any(i.mode == "stream" and i.watermark is None for i in rendered.inputs)):
        rendered, _ = _render(ctx, model, mode, template, static, windows)
    return rendered


def _capturable(ctx: RunContext, rendered: Rendered) -> frozenset[str]:
    """Batch file sources (json/csv) the query reads whole (all of their files): the scan counts their
    rows, instead of a count of its own before the model's action."""
    whole = whole_scans(rendered.sql)
    return frozenset(
        i.name for i in rendered.inputs
        if i.kind == "source" and i.mode == "batch" and not i.files and i.view in whole
        and ctx.project.sources[i.name].resolved_format in PERMISSIVE
        and ctx.project.sources[i.name].resolved_format in FILE_FORMATS)


def _render(ctx: RunContext, model: Model, mode: Mode, template: str | None, static: frozenset[tuple[str, str]],
            windows: tuple[str, ...], capture: frozenset[str] = frozenset(),
            deltas: Mapping[tuple[str, str], tuple[str, ...] | Appended] | None = None,
            ) -> tuple[Rendered, Translation]:
    """One rendering pass: inputs in ``static`` are read in batch; stream inputs without an event time
    get a watermark on the ``windows`` time columns (a view of their own: the session caches views)."""
    inputs: dict[tuple[str, str], Input] = {}
    problems: list[str] = []

    def relation(kind: str, name: str) -> str:
        if kind == "model" and name == model.name:
            return quote(name)  # `this`
        planned = _plan_input(ctx, model, kind, name, "batch" if (kind, name) in static else mode)
        if isinstance(planned, str):
            problems.append(planned)
            return quote(name)
        if deltas and (kind, name) in deltas and planned.mode == "batch":  # the appended part only
            part = deltas[(kind, name)]
            planned = replace(planned, view=f"{planned.view}__delta_{safe_identifier(model.name)}",
                              **({"appended": part} if isinstance(part, Appended) else {"files": part}))
        if kind == "source" and name in capture and planned.mode == "batch":  # this model's own view
            planned = replace(planned, capture=True, view=f"{planned.view}__scan_{safe_identifier(model.name)}")
        if windows and planned.mode == "stream" and planned.watermark is None:
            planned = replace(planned, fallback=windows,
                              view=f"{planned.view}__wm_{'_'.join(safe_identifier(w) for w in windows)}")
        inputs.setdefault((kind, name), planned)
        return quote(planned.view)

    once = rendered_once(ctx, model, template)
    sql = bind(once.sql, once.calls, relation)  # in the order the template called them, as inputs are listed
    if problems:
        raise ModelRunError(problems[0], model.name)
    translation = _translation(model.name, sql, mode == "stream", _catalog(ctx, tuple(inputs.values())))
    return Rendered(model.name, translation.sql or sql, tuple(inputs.values())), translation


@dataclass(frozen=True)
class Template:
    """A model's SQL rendered by Jinja once, each ``ref()``/``source()`` call left as a placeholder that
    each reading of it (batch, stream, an increment) binds to its views (:func:`...compile.compiled.bind`)."""

    sql: str
    calls: tuple[tuple[str, str], ...]  # (kind, name) of each relation, in the order the template called them


def rendered_once(ctx: RunContext, model: Model, template: str | None = None) -> Template:
    """The model's SQL (or a sink's ``template`` of it) rendered with the project's variables: the
    project's one render of it, the one its compile made (:func:`...compile.render.render_once`), or for a
    model that reads partition variables, one render for this run's window; each reading binds it after."""
    sql = template if template is not None else model.sql
    if not sql:
        raise ModelRunError(f"model {model.name} has no `sql:`", model.name)
    try:
        result, calls = render_once(ctx.project, model.name, sql, ctx.resolver)
        if result.uses_partition and model.partitioned_by is not None and ctx.partition is not None:
            window = ctx.partition.variables()  # rendered for this run's window, once
            result, calls = ctx.per_run.get(
                ("window", model.name, sql, tuple(sorted(window.items()))),
                lambda: render_calls(model.name, sql, variables=ctx.project.vars, resolver=ctx.resolver,
                                     partition=window))
    except RenderError as exc:
        raise ModelRunError(f"model {model.name}: {exc} (line {exc.lineno} of its SQL)", model.name) from None
    if result.missing_vars:
        raise ModelRunError(f"model {model.name}: environment variable(s) {', '.join(sorted(set(result.missing_vars)))}"
                            " not set; export them or add them to the project's .env", model.name)
    if result.unknown_vars:
        raise ModelRunError(f"model {model.name}: unknown project variable(s) "
                            f"{', '.join(sorted(set(result.unknown_vars)))}; define them under `vars:`", model.name)
    return Template(result.sql, calls)


def _catalog(ctx: RunContext, inputs: tuple[Input, ...]) -> Catalog:
    """The inputs' declared column types (a source's columns, a stored model's schema) and event times, by
    the view the rendered SQL reads: Flink's integer arithmetic and temporal joins depend on them."""
    columns: dict[str, dict[str, str]] = {}
    times: dict[str, str] = {}
    for i in inputs:
        if i.kind == "source":
            columns[i.view] = {c.name: c.type for c in ctx.project.sources[i.name].columns if c.type}
        else:
            stored = model_version(ctx, i.name)
            schema = stored.schema() if stored is not None else None
            if schema is not None:
                columns[i.view] = {f.name: f.dataType.simpleString() for f in schema.fields}
        event = _event_time(ctx.project, i.kind, i.name)
        if event is not None:
            times[i.view] = event[0]
    return Catalog(columns, times)


def _translation(name: str, sql: str, streaming: bool, catalog: Catalog | None = None) -> Translation:
    """The Flink SQL translated for Spark (``sql`` None: run as written)."""
    parsed = parse_query(sql)
    if parsed.tree is None:
        return Translation(None)  # sqlglot cannot read it: Spark analyzes it and reports any error
    if parsed.problems:
        p = parsed.problems[0]
        raise ModelRunError(f"model {name}: {p.construct} has no Spark equivalent (line {p.line}); {p.hint}", name)
    try:
        return translate(parsed.tree, streaming=streaming, catalog=catalog)
    except TranslationError as exc:
        raise ModelRunError(f"model {name}: {exc}", name) from None


def register(ctx: RunContext, rendered: Rendered) -> InputStats:
    """Register every input view of ``rendered``; return what reading them costs/diverted."""
    return sum((ensure(ctx, inp) for inp in rendered.inputs), InputStats())


def ensure(ctx: RunContext, inp: Input) -> InputStats:
    """Register ``inp`` as a temporary view in ctx.spark (once per session and run)."""
    return ctx.per_session.get(inp.view, lambda: _register(ctx, inp))


def _register(ctx: RunContext, inp: Input) -> InputStats:
    if inp.kind == "source":
        return register_source(ctx, inp)
    if inp.mode == "batch":
        return _register_model_batch(ctx, inp)
    return _register_model_stream(ctx, inp)


def not_materialized(name: str) -> ModelRunError:
    return ModelRunError(f"input model {name} has not been materialized yet (nothing in the warehouse); "
                         f"run it first, e.g. `streamt run -s {name}`", name)


def _register_model_batch(ctx: RunContext, inp: Input) -> InputStats:
    up = ctx.project.models[inp.name]
    if up.materialized == "view":  # no storage: what it means is its SQL now
        rendered = render(ctx, up, "batch")
        stats = register(ctx, rendered)
        ctx.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {quote(inp.view)} AS {rendered.sql}")
        return stats
    location: Loc = ctx.warehouse.data_dir(inp.name)
    if not is_delta_table(location):
        if location.is_dir() and any(location.iterdir()):
            raise ModelRunError(f"model {inp.name} is stored in the plain-file layout of an older dagster-streamt; "
                                f"rebuild it as a Delta table: `streamt run -s {inp.name} --full-refresh`", inp.name)
        raise not_materialized(inp.name)
    if up.partitioned_by is not None:
        df = _read_partitions(ctx, inp)
        df.createOrReplaceTempView(inp.view)
        return ctx.per_run.get(("model-rows", inp.view, str(location)), lambda: InputStats(df.count()))
    stored = model_version(ctx, inp.name)
    if stored is None:
        raise not_materialized(inp.name)
    if inp.appended is not None:  # an incremental refresh: the rows Delta's log appended since the last read
        read_appended(ctx.spark, location, inp.appended).createOrReplaceTempView(inp.view)
        return InputStats(inp.appended.rows)
    # the version the run saw, whatever a concurrent run committed since
    df = ctx.spark.read.format(DELTA).option("versionAsOf", stored.version).load(str(location))
    df.createOrReplaceTempView(inp.view)
    if stored.rows is not None:  # the files' statistics in the log
        return InputStats(stored.rows)
    return ctx.per_run.get(("model-rows", inp.view, str(location)), lambda: InputStats(df.count()))


def _read_partitions(ctx: RunContext, inp: Input) -> DataFrame:
    """A partitioned table without its partition column; only ``inp.keys`` when given (folders of
    other partitions are never listed: partition pruning)."""
    # Delta knows its columns, the partition column included
    df = ctx.spark.read.format(DELTA).load(str(ctx.warehouse.data_dir(inp.name)))
    if inp.keys is not None:
        df = df.filter(F.col(KEY_COLUMN).isin(list(inp.keys)))
    return df.drop(KEY_COLUMN)


def _register_model_stream(ctx: RunContext, inp: Input) -> InputStats:
    up = ctx.project.models[inp.name]
    if up.materialized == "view":
        rendered = render(ctx, up, "stream")
        stats = register(ctx, rendered)
        watermarked(ctx.spark.sql(rendered.sql), inp).createOrReplaceTempView(inp.view)
        return stats
    data = ctx.warehouse.data_dir(inp.name)
    if not is_delta_table(data):
        raise not_materialized(inp.name)
    df = ctx.spark.readStream.format(DELTA).load(str(data))
    # Delta's streaming source has no file metadata column: no arrival time for its rows
    watermarked(counted_stream(df, inp, files=False), inp).createOrReplaceTempView(inp.view)
    return InputStats()


def register_source_view(spark: SparkSession, project: Project, name: str, quarantine: bool = True) -> str:
    """A source read in batch (valid rows; malformed ones go to quarantine) as the temporary view
    ``name`` (returned), e.g. for tests on sources. ``quarantine=False``: the valid rows only, the
    malformed ones left for the next read to quarantine (a run's models, which report how many)."""
    ctx = RunContext.create(spark, project)
    if quarantine:
        ensure(ctx, Input("source", name, "batch", name)).resolved()  # quarantined
    else:
        valid_batch_rows(ctx, name).createOrReplaceTempView(name)
    return name


def register_model_view(spark: SparkSession, project: Project, name: str) -> str:
    """Make a stored model (table, stream output or view) readable in ``spark`` as the temporary view
    ``name`` (returned), e.g. for checks: ``spark.table(register_model_view(spark, project, "x"))``."""
    ensure(RunContext.create(spark, project), Input("model", name, "batch", name))
    return name
