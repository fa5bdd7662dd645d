"""``materialized: table``: the query's rows as a Delta table, one commit per refresh.

Each run brings the table up to date with its inputs in the cheapest exact way (see
:mod:`.refresh_plan`): nothing to do when no input changed; only the rows of the appended files when
the query allows it (an append commit of their rows, or their aggregation merged into the stored
state: :mod:`.table_state`); otherwise a full rebuild (an overwrite commit).
Whatever the way, the new version holds exactly the rows the query gives over all of its inputs, and
readers see the old version or the new one, never half.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from ...core.results import ModelResult
from ...spec.connectors import model_key
from ...spec.models import Model
from ...sql.incremental import IncrementalPlan, incremental_plan
from ..delta.delta_table import DELTA, Appended, Commit, change_since, current_commit, is_delta_table
from ..delta.delta_table import write as delta_write
from ..delta.input_files import Snapshot
from ..delta.keyed_table import TableKey, key_faults, merge, one_row_per_key, table_key
from ..delta.refresh_record import RefreshRecord, config_hash, input_key
from ..delta.table_state import (
    STATE,
    STATE_COMPACT_EVERY,
    Merge,
    StateTables,
    build_state,
    final_frame,
    same_columns,
    stage,
    state_matches,
    table_state,
)
from ..errors import first_meaningful_line
from ..run.context import RunContext
from ..run.output import counted, observed_rows, schema_pairs
from ..sources.relations import InputStats, Rendered, register, render
from ..sources.snapshots import model_version, source_snapshot
from ..sources.source_views import source_quarantined
from ..storage.store import Loc, ObjectPath, remove_tree
from .refresh_plan import InputId, Refresh, RefreshInputs, decide

LEGACY = ("_CURRENT", "v=*")  # what the pre-Delta layout (plain Parquet versions) left in a model's folder
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
    _clear_scratch(ctx, model)
    base = render(ctx, model, "batch")  # stable view names (no capture views): the plan and its record
    plan = incremental_plan(base.sql, [i.view for i in base.inputs], itself=model.name)
    commit = current_commit(ctx.warehouse.data_dir(model.name))
    given = _inputs(ctx, model, base, plan, commit)
    refresh = decide(given, full_refresh)
    if commit is not None and commit.rows is not None and commit.schema_json is not None:
        if refresh.mode == "unchanged":
            return _unchanged(ctx, model, base, commit, refresh, start)
        if refresh.mode in ("append", "merge", "upsert"):
            done = _incremental(ctx, model, base, plan, given, refresh, commit, start)
            if done is not None:
                return done
            refresh = Refresh("full", "the appended rows do not fit the table (its columns or its aggregation "
                                      "state changed)")
    elif refresh.mode != "full":
        refresh = Refresh("full", "the stored table's log has no row count for its current version")
    return _full(ctx, model, base, plan, given, refresh, start)


def _inputs(ctx: RunContext, model: Model, base: Rendered, plan: IncrementalPlan,
            commit: Commit | None) -> RefreshInputs:
    """Everything :func:`.refresh_plan.decide` looks at, read now (``commit``: the table's current one)."""
    adv = model.advanced.spark
    views: dict[InputId, str] = {}
    snapshots: dict[InputId, Snapshot | None] = {}
    tables: dict[InputId, Appended | str | None] = {}
    versions: dict[InputId, tuple[str, int]] = {}
    declared: dict[str, object] = {}
    record = commit.record if commit is not None else None
    for inp in base.inputs:
        key = (inp.kind, inp.name)
        views[key] = inp.view
        if inp.kind == "source":
            source = ctx.project.sources[inp.name]
            snapshots[key] = source_snapshot(ctx, source)
            declared[input_key(*key)] = source.model_dump(mode="json", include={
                "format", "path", "table", "topic", "options", "columns"})
        else:
            up = model_version(ctx, inp.name)
            # columns and types, without Delta's field metadata
            schema = up.schema() if up is not None else None
            declared[input_key(*key)] = schema.simpleString() if schema is not None else None
            if up is None:
                snapshots[key] = None
                continue
            versions[key] = (up.table_id, up.version)
            read = record.tables.get(input_key(*key)) if record is not None else None
            tables[key] = change_since(ctx.warehouse.data_dir(inp.name), up, read) if read is not None else None
    keys = model_key(model)
    config = config_hash({
        **({"key": list(keys)} if keys else {}), "sql": base.sql, "format": DELTA, "partition_by": adv.partition_by,
        "conf": {**ctx.project.runtime.spark.conf, **adv.conf,
                 "spark.sql.session.timeZone": ctx.per_session.get(("conf", "timeZone"), lambda: ctx.spark.conf.get(
                     "spark.sql.session.timeZone"))},
        "inputs": declared, "incremental": True})
    return RefreshInputs(plan, config, views, snapshots, record, tables, versions,
                         has_state=record is not None and record.states is not None and plan.state is not None,
                         files_now=len(commit.files) if commit is not None else 0, keyed=bool(keys))


def _record(given: RefreshInputs, kind: str, full: bool, states: dict[str, int] | None = None) -> RefreshRecord:
    """The record of the version this run commits: a full build's (its files are the table's then: -1),
    or the next incremental refresh since the build the current record names."""
    inputs = {input_key(*inp): dict(s.files) for inp, s in given.snapshots.items() if s is not None}
    tables = {input_key(*inp): read for inp, read in given.versions.items()}
    last = given.record
    at_rebuild, refreshes = (-1, 0) if full or last is None else (last.files_at_rebuild, last.refreshes + 1)
    return RefreshRecord(given.config, kind, inputs, at_rebuild, refreshes, states, tables)


def _result(ctx: RunContext, model: Model, refresh: Refresh, rows: int | None, size: int | None,
            schema: StructType, stats: InputStats, sql: str, start: float, commit: Commit | None) -> ModelResult:
    """``rows``: written by this run (a merge writes the whole table again); ``size``: the rows of the
    version now current (``commit``, when known)."""
    return ModelResult(delta_version=commit.version if commit is not None else None,
                       model=model.name, materialized="table", status="success", rows_written=rows, table_rows=size,
                       input_rows=stats.rows, duration_s=time.monotonic() - start, schema=schema_pairs(schema),
                       location=str(ctx.warehouse.data_dir(model.name)), quarantined_rows=stats.quarantined, sql=sql,
                       refresh=refresh.mode, refresh_note=refresh.note)


def _unchanged(ctx: RunContext, model: Model, base: Rendered, current: Commit, refresh: Refresh,
               start: float) -> ModelResult:
    """Nothing to read or write; the sources' malformed records are still reported (from their
    quarantines), as every other run of the table reports them."""
    bad = sum(source_quarantined(ctx, i.name) for i in base.inputs if i.kind == "source")
    return _result(ctx, model, refresh, 0, current.rows, _schema(current), InputStats(0, bad), "", start, current)


@contextmanager
def _scratch(ctx: RunContext, model: Model) -> Iterator[Loc]:
    """This run's scratch folder beside the model's table (never a table: not read), removed afterwards."""
    scratch = ctx.warehouse.model_dir(model.name) / f".scratch-{ctx.run_id}"
    try:
        yield scratch
    finally:
        remove_tree(scratch)


def _write_counted(ctx: RunContext, model: Model, df: DataFrame, mode: str, record: RefreshRecord,
                   key: TableKey | None = None) -> tuple[Commit | None, int | None]:
    """``df`` (one row per key when keyed) as one commit (:func:`_commit`), its rows counted as written."""
    name = f"streamt_table_{model.name}_{ctx.run_id}"
    out, obs = counted(one_row_per_key(df, key) if key else df, name)
    return _commit(ctx, model, out, mode, record, key), observed_rows(ctx.observed, obs, name)


def _full(ctx: RunContext, model: Model, base: Rendered, plan: IncrementalPlan, given: RefreshInputs,
          refresh: Refresh, start: float) -> ModelResult:
    """Rebuild from every input row; an aggregation first rebuilds its state and computes its rows from it."""
    rendered = render(ctx, model, "batch", whole=True)
    registered = register(ctx, rendered)
    df = ctx.observed.sql(ctx.spark, rendered.sql)
    key = _key(ctx, model, base, df.columns)
    kind = plan.kind
    tables = StateTables(ctx.warehouse.model_dir(model.name))
    states: dict[str, int] | None = None
    out_df = df
    with _scratch(ctx, model) as scratch:
        state = plan.state if plan.kind == "aggregate" else None
        if state is not None:
            renames = {b.view: r.view for b, r in zip(base.inputs, rendered.inputs, strict=True)}
            try:
                partial = ctx.observed.sql(ctx.spark, plan.delta_sql(renames))
                why_not = None if state_matches(ctx, state, partial.schema, df.schema) else \
                    "a state of its partial aggregates would not give its column types"
            except AnalysisException as exc:  # Spark cannot analyze the split (the query itself it could)
                why_not = f"Spark cannot split it into partial aggregates ({first_meaningful_line(exc)})"
            if why_not is None:
                _clear_legacy(ctx, model)
                tables = replace(tables, in_table=state.projection() is not None)
                states, state_rows = build_state(ctx, state, partial, tables, scratch)
                out_df = final_frame(ctx, state, state_rows, df.schema.names)
            else:  # said in this run's note; the next runs' notes say "rebuilt because of" it
                log.info("model %s keeps no aggregation state: %s", model.name, why_not)
                kind = "recompute"
                refresh = replace(refresh, note=f"{refresh.note}; it keeps no aggregation state: {why_not}")
        if states is None:
            tables.drop()
        commit, rows = _write_counted(ctx, model, out_df, "overwrite", _record(given, kind, True, states), key)
        if state is not None and states is not None:
            tables.keep(bool(state.distinct))  # what a build of the other layout left
    size = rows if rows is not None else commit.rows if commit is not None else None
    return _result(ctx, model, refresh, rows, size, df.schema, registered.settle(), rendered.shown, start, commit)


def _incremental(ctx: RunContext, model: Model, base: Rendered, plan: IncrementalPlan, given: RefreshInputs,
                 refresh: Refresh, current: Commit, start: float) -> ModelResult | None:
    """Append the rows of the appended files, or merge their aggregation into the state; None when
    their rows do not fit the stored table (a full rebuild follows)."""
    # an append or upsert writes every row of the query once: the sources it reads whole count as it goes
    rendered = render(ctx, model, "batch", whole=refresh.mode != "merge", deltas=refresh.deltas)
    registered = register(ctx, rendered)
    schema = _schema(current)
    record = given.record
    assert record is not None
    if refresh.mode in ("upsert", "append"):
        df = ctx.observed.sql(ctx.spark, rendered.sql)
        if not same_columns(df.schema, schema):
            return None
        if refresh.mode == "upsert":
            key = _key(ctx, model, base, schema.names)
            assert key is not None
            commit, rows = _upsert(ctx, model, df, key, _record(given, plan.kind, False))
            size = commit.rows if commit is not None else None
        else:
            commit, rows = _write_counted(ctx, model, df, "append", _record(given, plan.kind, False))
            size = current.rows + rows if current.rows is not None and rows is not None else \
                commit.rows if commit is not None else None
    else:
        assert plan.state is not None and record.states is not None
        state = plan.state
        tables = StateTables(ctx.warehouse.model_dir(model.name), in_table=state.projection() is not None)
        if not tables.in_table and STATE not in record.states:  # no state version recorded: rebuilt
            return None
        renames = {b.view: r.view for b, r in zip(base.inputs, rendered.inputs, strict=True)}
        with _scratch(ctx, model) as scratch:
            text = plan.delta_sql(renames)
            delta = ctx.observed.sql(ctx.spark, text)
            if ctx.observed.refers(ctx.spark, text):  # observed source reads (Spark Connect): staged, read once
                delta = stage(delta, str(scratch / "delta"), ctx.observed)
            old = table_state(ctx, state, ctx.warehouse.data_dir(model.name), current.version, schema.names) \
                if tables.in_table else None
            merged = Merge(ctx, state, tables, dict(record.states), delta, old)
            if not merged.fits():
                return None
            states, state_rows = merged.apply(compact=(record.refreshes + 1) % STATE_COMPACT_EVERY == 0)
            rows_now = final_frame(ctx, state, state_rows, schema.names)
            commit, rows = _write_counted(ctx, model, rows_now, "overwrite", _record(given, plan.kind, False, states),
                                          _key(ctx, model, base, schema.names))
        size = rows if rows is not None else commit.rows if commit is not None else None
    return _result(ctx, model, refresh, rows, size, schema, registered.settle(), rendered.shown, start, commit)


def _key(ctx: RunContext, model: Model, base: Rendered, columns: list[str]) -> TableKey | None:
    """The model's key checked against its output ``columns``, with the event time of it or its inputs."""
    return table_key(ctx.project, model, columns, [(i.kind, i.name) for i in base.inputs])


def _clear_scratch(ctx: RunContext, model: Model) -> None:
    """Remove the scratch folders of earlier runs of the model that were killed (the caller holds the
    model's lock, so no other run is using one)."""
    model_dir = ctx.warehouse.model_dir(model.name)
    if isinstance(model_dir, ObjectPath) or not model_dir.is_dir():
        return
    for old in model_dir.glob(".scratch-*"):
        remove_tree(old)


def _clear_legacy(ctx: RunContext, model: Model) -> None:
    """Remove what the pre-Delta layout left (plain Parquet versions and their pointer), or a non-Delta
    output in the table's place, before a full build (the caller holds the model's lock)."""
    model_dir = ctx.warehouse.model_dir(model.name)
    if not isinstance(model_dir, ObjectPath):  # the pre-Delta layout was never on an object store
        for pattern in LEGACY:
            for old in model_dir.glob(pattern):
                if old.is_dir():
                    remove_tree(old)
                else:
                    old.unlink(missing_ok=True)
    location = ctx.warehouse.data_dir(model.name)
    if location.is_dir() and not is_delta_table(location):
        remove_tree(location)


def _commit(ctx: RunContext, model: Model, df: DataFrame, mode: str, record: RefreshRecord,
            key: TableKey | None = None) -> Commit | None:
    """``df`` as one Delta commit (overwrite or append) to the model's table; the version it made (rows
    from its files' statistics). ``key``: the keyed table whose key faults ``df`` may raise."""
    if mode == "overwrite":
        _clear_legacy(ctx, model)
    location = ctx.warehouse.data_dir(model.name)
    with key_faults(key):
        delta_write(df, location, mode, record, model.advanced.spark.partition_by, change_feed=key is None)
    ctx.observed.collect(df)  # the observed inputs' metrics (Spark Connect)
    return current_commit(location)  # under the model's lock: this run's commit


def _upsert(ctx: RunContext, model: Model, df: DataFrame, key: TableKey,
            record: RefreshRecord) -> tuple[Commit | None, int | None]:
    """The increment's rows, one per key, merged into the table on the key in one commit; the commit
    and the rows it inserted or replaced."""
    with _scratch(ctx, model) as scratch, key_faults(key):
        stage(one_row_per_key(df, key), str(scratch / "upsert"), ctx.observed)
        counts = merge(ctx.spark, str(scratch / "upsert"), ctx.warehouse.data_dir(model.name), key, record)
    return current_commit(ctx.warehouse.data_dir(model.name)), counts["inserted"] + counts["updated"]


def _schema(current: Commit) -> StructType:
    """The stored table's schema, as its Delta log records it (the caller checked it has one)."""
    schema = current.schema()
    assert schema is not None
    return schema
