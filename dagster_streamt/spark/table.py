"""``materialized: table``: the query's rows, stored as a new version swapped in atomically.

Each run brings the table up to date with its inputs in the cheapest exact way (see
:mod:`.refresh_plan`): nothing to do when no input changed; only the rows of the appended files when
the query allows it (their rows appended to the table, or their aggregation merged into the stored
state); otherwise a full rebuild. Whatever the way, the new version holds exactly the rows the query
gives over all of its inputs, and readers see the old version or the new one, never half.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from ..core.results import ModelResult
from ..spec.models import Model
from ..sql.incremental import IncrementalPlan, incremental_plan
from .context import RunContext
from .delta_table import DELTA, Commit, current_commit, is_delta_table
from .delta_table import write as delta_write
from .input_files import Snapshot, tree_files
from .observed_views import collect_flows
from .output import counted, format_options, observed_rows, parquet_rows, schema_pairs
from .refresh_plan import InputId, Refresh, RefreshInputs, decide
from .refresh_record import STATE, RefreshRecord, config_hash, input_key, read_record, write_record
from .relations import InputStats, Rendered, register, render
from .snapshots import model_snapshot, source_snapshot
from .source_views import source_quarantined
from .table_state import SET, Merge, final_frame, same_columns, stage, state_matches, write_state
from .warehouse import RegistryEntry

INCREMENTAL_FORMATS = ("parquet", "orc", "json", "csv", "avro")
log = logging.getLogger(__name__)


def materialize_table(ctx: RunContext, model: Model, full_refresh: bool = False) -> ModelResult:
    """Bring the table up to date (``full_refresh``: rebuild it whatever changed). A partitioned
    table replaces only the run's partitions instead."""
    if model.partitioned_by is not None:
        from .partitioned_table import materialize_partitions

        return materialize_partitions(ctx, model, full_refresh)
    with ctx.warehouse.lock(model.name):  # plan and write against one current version
        return _materialize(ctx, model, full_refresh)


def _materialize(ctx: RunContext, model: Model, full_refresh: bool) -> ModelResult:
    start = time.monotonic()
    base = render(ctx, model, "batch")  # stable view names (no capture views): the plan and its record
    plan = incremental_plan(base.sql, [i.view for i in base.inputs], itself=model.name)
    commit: Commit | None = None
    if model.advanced.spark.format == DELTA:
        commit = current_commit(ctx.warehouse.data_dir(model.name))
        current = ctx.warehouse.data_dir(model.name) if commit is not None else None
        version = str(commit.version) if commit is not None else None
    else:
        current = ctx.warehouse.current_version(model.name)
        version = current.name if current is not None else None
    entry = ctx.warehouse.read_entry(model.name)
    given = _inputs(ctx, model, base, plan, current, commit)
    refresh = decide(given, full_refresh)
    if entry is not None and current is not None and entry.version == version and entry.rows is not None:
        if refresh.mode == "unchanged":
            return _unchanged(ctx, model, base, entry, current, refresh, start)
        if refresh.mode in ("append", "merge"):
            done = _incremental(ctx, model, base, plan, given, refresh, entry, current, start)
            if done is not None:
                return done
            refresh = Refresh("full", "the appended rows do not have the table's columns")
    elif refresh.mode != "full":
        refresh = Refresh("full", "the stored table has no row count for its current version")
    return _full(ctx, model, base, plan, given, refresh, start)


def _inputs(ctx: RunContext, model: Model, base: Rendered, plan: IncrementalPlan, current: Path | None,
            commit: Commit | None) -> RefreshInputs:
    """Everything :func:`.refresh_plan.decide` looks at, read now (``commit``: a Delta table's current one)."""
    adv = model.advanced.spark
    views: dict[InputId, str] = {}
    snapshots: dict[InputId, Snapshot | None] = {}
    declared: dict[str, object] = {}
    for inp in base.inputs:
        key = (inp.kind, inp.name)
        views[key] = inp.view
        if inp.kind == "source":
            source = ctx.project.sources[inp.name]
            snapshots[key] = source_snapshot(ctx, source)
            declared[input_key(*key)] = source.model_dump(mode="json", include={
                "format", "path", "table", "topic", "options", "columns"})
        else:
            up = ctx.warehouse.read_entry(inp.name)
            snapshots[key] = model_snapshot(ctx, up) if up is not None else None
            declared[input_key(*key)] = [up.layout, up.schema_json] if up is not None else None
    config = config_hash({
        "sql": base.sql, "format": adv.format, "partition_by": adv.partition_by, "options": format_options(adv.format),
        "conf": {**ctx.project.runtime.spark.conf, **adv.conf,
                 "spark.sql.session.timeZone": ctx.per_session.get(("conf", "timeZone"), lambda: ctx.spark.conf.get(
                     "spark.sql.session.timeZone"))},
        "inputs": declared, "incremental": adv.format in (*INCREMENTAL_FORMATS, DELTA)})
    if adv.format == DELTA:  # appends are Delta commits; an aggregation's state is not kept in Delta yet
        record = commit.record if commit is not None else None
        return RefreshInputs(plan, config, views, snapshots, record, has_state=False,
                             files_now=len(commit.files) if commit is not None else 0)
    record = read_record(current) if adv.format in INCREMENTAL_FORMATS else None
    return RefreshInputs(plan, config, views, snapshots, record,
                         has_state=current is not None and (current / STATE).is_dir() and (
                             plan.state is None or not plan.state.distinct or (current / SET).is_dir()),
                         files_now=_files(current) if current is not None else 0)


def _files(version: Path) -> int:
    """Data files of a version, its DISTINCT set's included: what appends multiply."""
    return sum(len(tree_files(folder) or {}) for folder in (version, version / SET))


def _record(given: RefreshInputs, kind: str, files_at_rebuild: int, refreshes: int) -> RefreshRecord:
    inputs = {input_key(*inp): dict(s.files) for inp, s in given.snapshots.items() if s is not None}
    return RefreshRecord(given.config, kind, inputs, files_at_rebuild, refreshes)


def _result(model: Model, refresh: Refresh, rows: int | None, size: int | None, schema: StructType, location: Path,
            stats: InputStats, sql: str, start: float, version: int | None = None) -> ModelResult:
    """``rows``: written by this run (a merge writes the whole table again); ``size``: the rows of the
    version now current; ``version``: its Delta version (a Delta table)."""
    return ModelResult(delta_version=version,
                       model=model.name, materialized="table", status="success", rows_written=rows, table_rows=size,
                       input_rows=stats.rows, duration_s=time.monotonic() - start, schema=schema_pairs(schema),
                       location=str(location), quarantined_rows=stats.quarantined, sql=sql,
                       refresh=refresh.mode, refresh_note=refresh.note)


def _unchanged(ctx: RunContext, model: Model, base: Rendered, entry: RegistryEntry, current: Path, refresh: Refresh,
               start: float) -> ModelResult:
    """Nothing to read or write; the sources' malformed records are still reported (from their ledgers),
    as every other run of the table reports them."""
    bad = sum(source_quarantined(ctx, i.name) for i in base.inputs if i.kind == "source")
    version = int(entry.version) if entry.layout == "delta" and entry.version is not None else None
    return _result(model, refresh, 0, entry.rows, entry.stored_schema(), current, InputStats(0, bad), "", start,
                   version)


def _writer(df: DataFrame, model: Model, mode: str) -> Callable[[str], None]:
    adv = model.advanced.spark

    def write(path: str) -> None:
        writer = df.write.format(adv.format).options(**format_options(adv.format)).mode(mode)
        if adv.partition_by:
            writer = writer.partitionBy(*adv.partition_by)
        writer.save(path)
        collect_flows(df)  # the observed inputs' metrics (Spark Connect)

    return write


def _full(ctx: RunContext, model: Model, base: Rendered, plan: IncrementalPlan, given: RefreshInputs,
          refresh: Refresh, start: float) -> ModelResult:
    """Rebuild from every input row; an aggregation keeps its state beside the rows."""
    rendered = render(ctx, model, "batch", whole=True)
    registered = register(ctx, rendered)
    df = ctx.observed.sql(ctx.spark, rendered.sql)
    adv = model.advanced.spark
    state = plan.state if plan.kind == "aggregate" and adv.format in INCREMENTAL_FORMATS else None
    kind = plan.kind
    partial: DataFrame | None = None
    if state is not None:
        renames = {b.view: r.view for b, r in zip(base.inputs, rendered.inputs, strict=True)}
        try:
            partial = ctx.observed.sql(ctx.spark, plan.delta_sql(renames))
            matches = state_matches(ctx, state, partial.schema, df.schema)
        except Exception:  # Spark cannot analyze the split (the query itself it could): no state, then
            log.debug("model %s: no aggregation state", model.name, exc_info=True)
            matches = False
        if not matches:
            partial, kind = None, "recompute"
    name = f"streamt_table_{model.name}_{ctx.run_id}"
    box: dict[str, object] = {}
    if adv.format == DELTA:
        out, obs = counted(df, name)
        commit = _commit(ctx, model, out, "overwrite", _record(given, kind, -1, 0))
        rows = observed_rows(obs, name)
        size = rows if rows is not None else commit.rows if commit is not None else None
        _register_commit(ctx, model, df.schema, size, commit)
        return _result(model, refresh, rows, size, df.schema, ctx.warehouse.data_dir(model.name),
                       registered.settle(), rendered.sql, start, commit.version if commit is not None else None)

    def write(path: str) -> None:
        if partial is not None and state is not None:
            write_state(state, partial, path)
            out, box["obs"] = counted(final_frame(ctx, state, path, df.schema.names), name)
            _writer(out, model, "append")(path)
        else:
            out, box["obs"] = counted(df, name)
            _writer(out, model, "error")(path)
        write_record(Path(path), _record(given, kind, _files(Path(path)), 0))

    previous = ctx.warehouse.read_entry(model.name)
    location = ctx.warehouse.write_version(model.name, write, locked=True)
    if previous is not None and previous.layout in ("partitioned", "delta"):  # the old layout's folder goes
        shutil.rmtree(ctx.warehouse.data_dir(model.name), ignore_errors=True)
    rows = observed_rows(box["obs"], name)  # type: ignore[arg-type]
    size = rows if rows is not None else _footer_rows(model, location)
    _register_version(ctx, model, df.schema, size, location)
    return _result(model, refresh, rows, size, df.schema, location, registered.settle(), rendered.sql, start)


def _incremental(ctx: RunContext, model: Model, base: Rendered, plan: IncrementalPlan, given: RefreshInputs,
                 refresh: Refresh, entry: RegistryEntry, current: Path, start: float) -> ModelResult | None:
    """Append the rows of the appended files, or merge their aggregation into the state; None when
    their rows do not fit the stored table (a full rebuild follows)."""
    rendered = render(ctx, model, "batch", deltas=refresh.deltas)
    registered = register(ctx, rendered)
    schema = entry.stored_schema()
    name = f"streamt_table_{model.name}_{ctx.run_id}"
    box: dict[str, object] = {}
    record = given.record
    assert record is not None
    if refresh.mode == "append":
        df = ctx.observed.sql(ctx.spark, rendered.sql)
        if not same_columns(df.schema, schema):
            return None
        out, obs = counted(df, name)
        if model.advanced.spark.format == DELTA:
            commit = _commit(ctx, model, out, "append", _record(given, plan.kind, record.files_at_rebuild,
                                                                 record.refreshes + 1))
            rows = observed_rows(obs, name)
            size = entry.rows + rows if entry.rows is not None and rows is not None else \
                commit.rows if commit is not None else None
            _register_commit(ctx, model, schema, size, commit)
            return _result(model, refresh, rows, size, schema, current, registered.settle(), rendered.sql, start,
                           commit.version if commit is not None else None)

        def write(path: str) -> None:
            _writer(out, model, "append")(path)
            write_record(Path(path), _record(given, plan.kind, record.files_at_rebuild, record.refreshes + 1))

        location = ctx.warehouse.write_version(model.name, write, locked=True, base=current)
        rows = observed_rows(obs, name)
        size = entry.rows + rows if entry.rows is not None and rows is not None else _footer_rows(model, location)
    else:
        assert plan.state is not None
        renames = {b.view: r.view for b, r in zip(base.inputs, rendered.inputs, strict=True)}
        state = plan.state
        scratch = ctx.warehouse.model_dir(model.name) / f".delta-{ctx.run_id}"  # never a version: not read
        try:
            text = plan.delta_sql(renames)
            delta = ctx.observed.sql(ctx.spark, text)
            if ctx.observed.refers(ctx.spark, text):  # observed source reads (Spark Connect): staged, read once
                delta = stage(delta, str(scratch))
            merge = Merge(ctx, state, str(current), delta)
            if not merge.fits():
                return None

            def model_rows(merged: DataFrame, path: str) -> None:
                out, box["obs"] = counted(final_frame(ctx, state, merged, schema.names), name)
                _writer(out, model, "append")(path)

            def write(path: str) -> None:
                merge.writes(path, model_rows)
                write_record(Path(path), _record(given, plan.kind, record.files_at_rebuild, record.refreshes + 1))

            location = ctx.warehouse.write_version(model.name, write, locked=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        rows = observed_rows(box["obs"], name)  # type: ignore[arg-type]
        size = rows if rows is not None else _footer_rows(model, location)
    _register_version(ctx, model, schema, size, location)
    return _result(model, refresh, rows, size, schema, location, registered.settle(), rendered.sql, start)


def _footer_rows(model: Model, version: Path) -> int | None:
    """A version's rows when no count came back: its Parquet footers (no scan); None for other formats."""
    return parquet_rows(version) if model.advanced.spark.format == "parquet" else None


def _commit(ctx: RunContext, model: Model, df: DataFrame, mode: str, record: RefreshRecord) -> Commit | None:
    """``df`` as one Delta commit (overwrite or append) to the model's table; the version it made (rows
    from its files' statistics). A full build first clears what an older layout left there."""
    adv = model.advanced.spark
    location = ctx.warehouse.data_dir(model.name)
    if mode == "overwrite":
        ctx.warehouse.drop_versions(model.name)
        if location.exists() and not is_delta_table(location):  # parquet partitions or a file-sink output
            shutil.rmtree(location)
    delta_write(df, location, mode, record, adv.partition_by)
    collect_flows(df)  # the observed inputs' metrics (Spark Connect)
    return current_commit(location)  # under the model's lock: this run's commit


def _register_commit(ctx: RunContext, model: Model, schema: StructType, rows: int | None,
                     commit: Commit | None) -> None:
    ctx.warehouse.write_entry(RegistryEntry(name=model.name, kind="table", layout="delta", format=DELTA,
                                            schema_json=schema.json(), rows=rows,
                                            version=str(commit.version) if commit is not None else None))


def _register_version(ctx: RunContext, model: Model, schema: StructType, rows: int | None, location: Path) -> None:
    adv = model.advanced.spark
    ctx.warehouse.write_entry(RegistryEntry(name=model.name, kind="table", layout="versioned", format=adv.format,
                                            schema_json=schema.json(), options=format_options(adv.format), rows=rows,
                                            version=location.name))
