"""An aggregation table's state as Delta tables: built from the partial rows, extended by the partial
rows of appended input (one append commit of the changed groups), and the model's rows computed from it
(:mod:`dagster_streamt.sql.aggregate_state` splits the SQL).

Beside the model's table (``<model>/data``) live ``<model>/_streamt_state`` (keys, partial aggregates,
DISTINCT tallies: one row per group after a build, plus a row per group each refresh changed, which
:func:`compacted` merges) and, with DISTINCT aggregates, ``<model>/_streamt_set`` (the (group, value)
pairs seen so far, which a refresh appends to). Every ``STATE_COMPACT_EVERY``-th refresh rewrites the
state one row per group instead of appending. An append is Delta's cheapest commit: it needs neither
the stored rows nor the table's file list (an overwrite needs both; measured about 0.5 s against
1.3 s per commit on a warm server). Their Delta versions are recorded in the model table's commit
(:class:`.refresh_record.RefreshRecord`): the model's rows and the state they came from are one pair.
A run killed after extending the state but before committing the rows leaves the state a version ahead
of the record; the next run sees it and rebuilds.

When the model's rows are its state under other names (``SELECT tier, sum(amount) AS revenue,
count(DISTINCT customer_id) AS n ... GROUP BY tier``: every column a group key, a merged value or a
DISTINCT tally, each once, no ``HAVING``; :meth:`.AggregateState.projection`), the model's table is the
state: there is no ``_streamt_state``, a refresh reads the groups from the table's current version and
commits the merged groups as the table's next one (the hand-written way, one commit less per refresh:
the state's append and its read-back cost 0.5-0.7 s of a 13 s rerun of the peer pipeline). Its record
names the set's version only (or none), so a table of the other layout does not fit and is rebuilt.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ...sql.aggregate_state import AggregateState
from ...sql.identifiers import quote as _ident
from ..run.context import RunContext
from ..run.observed_views import ObservedViews, sql_over
from ..storage.store import Loc, remove_tree
from .delta_table import DELTA, current_version

STATE = "_streamt_state"
SET = "_streamt_set"
STATE_COMPACT_EVERY = 16  # every this many refreshes the state is rewritten one row per group
MERGES: dict[str, Callable[[Column], Column]] = {"sum": F.sum, "min": F.min, "max": F.max,
                                                  "bool_and": F.bool_and, "bool_or": F.bool_or}


def _q(name: str) -> Column:
    return F.col(_ident(name))


def same_columns(a: StructType, b: StructType) -> bool:
    """Same column names and types, in order (nullability aside: a small delta may prove more)."""
    return [(f.name, f.dataType.simpleString()) for f in a.fields] == \
        [(f.name, f.dataType.simpleString()) for f in b.fields]


def _tally_exprs(state: AggregateState) -> list[Column]:
    """The DISTINCT tallies over rows that hold each (group, values) pair once."""
    every = reduce(lambda a, b: a & b, (_q(d).isNotNull() for d in state.distinct))
    return [(F.count(F.when(every, F.lit(1))) if t.kind == "count" else F.sum(_q(state.distinct[0]))).alias(t.name)
            for t in state.tallies]


def _per_group(state: AggregateState, rows: DataFrame, exprs: list[Column]) -> DataFrame:
    keys = [_q(k) for k in state.keys]
    return rows.groupBy(*keys).agg(*exprs) if keys else rows.agg(*exprs)


def groups(state: AggregateState, partial: DataFrame) -> DataFrame:
    """The state (one row per group) of partial rows: the rows themselves without DISTINCT aggregates,
    else their values merged per group and their pairs tallied (partial rows are unique per pair)."""
    if not state.distinct:
        return partial
    return _per_group(state, partial, [MERGES[v.merge](_q(v.name)).alias(v.name) for v in state.values]
                      + _tally_exprs(state))


def pairs(state: AggregateState, partial: DataFrame) -> DataFrame:
    return partial.select(*[_q(c) for c in (*state.keys, *state.distinct)])


def state_matches(ctx: RunContext, state: AggregateState, partial: StructType, model: StructType) -> bool:
    """Whether the final query over a state built from partial rows of schema ``partial`` gives exactly
    the model's column names and types (an ``avg`` of decimals, say, would not): checked on an empty
    state, so by analysis only."""
    view = f"streamt_state_check_{uuid.uuid4().hex[:12]}"
    try:
        empty = ctx.spark.createDataFrame([], partial)
        groups(state, empty).createOrReplaceTempView(view)
        final = ctx.spark.sql(state.final_sql(view, list(model.names))).schema
    except PySparkException:  # e.g. a partial aggregate Spark cannot type: the model is rebuilt every time instead
        return False
    finally:
        ctx.spark.catalog.dropTempView(view)
    return same_columns(final, model)


@dataclass(frozen=True)
class StateTables:
    """Where a model's state lives (``<model>/_streamt_state``, ``<model>/_streamt_set``)."""

    model_dir: Loc
    in_table: bool = False  # the model's own table holds the state (no _streamt_state)

    @property
    def state(self) -> Loc:
        return self.model_dir / STATE

    @property
    def set(self) -> Loc:
        return self.model_dir / SET

    def versions(self, distinct: bool) -> dict[str, int] | None:
        """The tables' current Delta versions (what a model commit records); None if one is missing."""
        found = {} if self.in_table else {STATE: current_version(self.state)}
        if distinct:
            found[SET] = current_version(self.set)
        return None if None in found.values() else {k: v for k, v in found.items() if v is not None}

    def drop(self) -> None:
        """Remove the state of a model that no longer keeps one (its query changed)."""
        for path in (self.state, self.set):
            remove_tree(path)

    def keep(self, distinct: bool) -> None:
        """Remove the state tables this layout does not use (what a model of the other layout left)."""
        for path, used in ((self.state, not self.in_table), (self.set, distinct)):
            if not used:
                remove_tree(path)


def stage(df: DataFrame, path: str, observed: ObservedViews | None = None) -> DataFrame:
    """``df`` written to ``path`` (scratch Parquet, never read as a table) and read back: what several
    jobs read is computed once, and a plan over it holds no query references (Spark Connect cannot
    nest a query that travels with its DataFrames in a view or in two branches of one plan).
    ``observed``: the run's observed views, which keep the metrics of those the write read."""
    df.write.mode("error").parquet(path)
    if observed is not None:
        observed.collect(df)  # the metrics of observed inputs it read (Spark Connect)
    return df.sparkSession.read.parquet(path)


def _save(df: DataFrame, path: Loc, mode: str, observed: ObservedViews) -> None:
    writer = df.write.format(DELTA).mode(mode)
    if mode == "overwrite":
        writer = writer.option("overwriteSchema", "true")
    writer.save(str(path))
    observed.collect(df)


def read_state(ctx: RunContext, tables: StateTables, version: int) -> DataFrame:
    return ctx.spark.read.format(DELTA).option("versionAsOf", version).load(str(tables.state))


def table_state(ctx: RunContext, state: AggregateState, data: Loc, version: int, names: list[str]) -> DataFrame:
    """The state a model's table keeps (``names``: the model's columns; see :meth:`.AggregateState.projection`):
    its rows at ``version`` with the state's column names, in the state's order."""
    projection = state.projection()
    assert projection is not None
    renamed = dict(zip(projection, names, strict=True))
    rows = ctx.spark.read.format(DELTA).option("versionAsOf", version).load(str(data))
    return rows.select(*[_q(renamed[c]).alias(c) for c in state.columns()])


def build_state(ctx: RunContext, state: AggregateState, partial: DataFrame, tables: StateTables,
                scratch: Loc) -> tuple[dict[str, int], DataFrame]:
    """A full build's state (and DISTINCT set) from every partial row: one overwrite commit each (none
    for a state the model's table keeps); the tables' versions and the state's rows, one per group."""
    observed = ctx.observed
    if not state.distinct:
        rows = partial
    else:
        staged = stage(partial, str(scratch / "partial"), observed)  # two writes, one pass over the input
        _save(pairs(state, staged), tables.set, "overwrite", observed)
        rows = groups(state, staged)
    if not tables.in_table:
        _save(rows, tables.state, "overwrite", observed)
    found = tables.versions(bool(state.distinct))
    assert found is not None  # just written
    return found, rows if tables.in_table else read_state(ctx, tables, found[STATE])


def final_frame(ctx: RunContext, state: AggregateState, rows: DataFrame, names: list[str]) -> DataFrame:
    """The model's rows computed from state rows (one per group: see :func:`compacted`)."""
    view = f"streamt_state_{uuid.uuid4().hex[:12]}"
    return sql_over(ctx.spark, state.final_sql(view, names), {view: rows})


def compacted(state: AggregateState, rows: DataFrame) -> DataFrame:
    """State rows merged to one per group (values by their merge, tallies summed), in the state's
    columns and types (a sum of decimals would widen them)."""
    keys = [_q(k) for k in state.keys]
    types = {f.name: f.dataType for f in rows.schema.fields}
    aggs = [MERGES[v.merge](_q(v.name)).cast(types[v.name]).alias(v.name) for v in state.values]
    aggs += [F.sum(_q(t.name)).cast(types[t.name]).alias(t.name) for t in state.tallies]
    merged = rows.groupBy(*keys).agg(*aggs) if keys else rows.agg(*aggs)
    return merged.select(*[_q(c) for c in rows.columns])


class Merge:
    """The merge of the appended rows' partial rows (``delta``) into the state recorded by the model's
    current commit (``versions``). ``delta`` is read more than once: it is staged (see :func:`stage`)
    when a plan may not hold it twice."""

    def __init__(self, ctx: RunContext, state: AggregateState, tables: StateTables, versions: dict[str, int],
                 delta: DataFrame, old: DataFrame | None = None) -> None:
        """``old``: the stored state, when the model's table keeps it (:func:`table_state`)."""
        self.ctx, self.state, self.tables, self.versions = ctx, state, tables, versions
        self.old = old if old is not None else read_state(ctx, tables, versions[STATE])
        self.delta = delta

    def fits(self) -> bool:
        """Whether the state is the one the model's rows came from (no run merged into it since), and the
        appended rows' partial rows have its columns."""
        return self.tables.versions(bool(self.state.distinct)) == self.versions and \
            same_columns(groups(self.state, self.delta).schema, self.old.schema)

    def _new_pairs(self) -> DataFrame:
        """Append the delta's pairs not in the set yet (one Delta commit, empty when they are all known);
        those pairs. The set is read at its recorded version, so the pairs are the same each time the
        plan is computed: the tallies compute them again rather than staging them."""
        state = self.state
        seen = self.ctx.spark.read.format(DELTA).option("versionAsOf", self.versions[SET]).load(str(self.tables.set))
        mine = pairs(state, self.delta)  # unique already: the partial rows are grouped by keys and values
        cond = reduce(lambda a, b: a & b, (mine[c].eqNullSafe(seen[c]) for c in (*state.keys, *state.distinct)))
        new = mine.join(seen, cond, "left_anti")
        # (no emptiness check first: a partial read of the delta would fill its row-count observation)
        _save(new, self.tables.set, "append", self.ctx.observed)
        return new

    def _changes(self) -> DataFrame:
        """One row per group the delta touches: its values merged, and the tallies of its new pairs
        (added to the set first)."""
        state, old = self.state, self.old
        if not state.distinct:
            return groups(state, self.delta)
        keys = [_q(k) for k in state.keys]

        def typed_null(name: str) -> Column:
            return F.lit(None).cast(old.schema[name].dataType).alias(name)

        values = _per_group(state, self.delta, [MERGES[v.merge](_q(v.name)).alias(v.name) for v in state.values])
        nulls = [typed_null(t.name) for t in state.tallies]
        tallies = _per_group(state, self._new_pairs(), _tally_exprs(state)).select(
            *keys, *[typed_null(v.name) for v in state.values], *[_q(t.name) for t in state.tallies])
        return compacted(state, values.select(*keys, *[_q(v.name) for v in state.values], *nulls).unionByName(tallies))

    def apply(self, compact: bool) -> tuple[dict[str, int], DataFrame]:
        """Extend the set (first: the tallies need its new pairs), then commit the changed groups: one
        append commit; ``compact``: the stored groups and the changed ones combined per group, as one
        overwrite commit instead (Delta's ``MERGE`` of the changed groups would rewrite every file a
        changed group lives in, which for a state spread by hash is all of them, and its join to find
        those files cost 10-20 s on the peer pipeline). A state the model's table keeps is committed
        with the model's rows instead. The tables' new versions, and the state's rows one per group."""
        state, old = self.state, self.old
        changes = self._changes()
        changes = changes.select(*[F.col(_ident(c)).cast(old.schema[c].dataType).alias(c) for c in old.columns])
        combined = compacted(state, old.unionByName(changes))  # (a plan: computed where it is written)
        if not self.tables.in_table:
            if compact:
                _save(combined, self.tables.state, "overwrite", self.ctx.observed)
            else:
                _save(changes, self.tables.state, "append", self.ctx.observed)
        found = self.tables.versions(bool(state.distinct))
        assert found is not None
        if self.tables.in_table:
            return found, combined
        return found, compacted(state, read_state(self.ctx, self.tables, found[STATE]))
