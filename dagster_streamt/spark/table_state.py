"""An aggregation table's state in Spark: checking that it reproduces the model's columns, building it
from the partial rows, merging the state of appended rows into the stored one, and computing the
model's rows from it (:mod:`dagster_streamt.sql.aggregate_state` splits the SQL).

Layout inside a table version: ``_streamt_state/`` one row per group (keys, partial aggregates,
DISTINCT tallies); with DISTINCT aggregates also ``_streamt_set/``, the (group, value) pairs seen so
far, which a refresh extends with hard links to the old files plus a file of the new pairs.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from functools import reduce
from pathlib import Path

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..sql.aggregate_state import AggregateState
from .context import RunContext
from .observed_views import collect_flows, sql_over
from .warehouse import link_data_files

SET = "_streamt_set"
MERGES: dict[str, Callable[[Column], Column]] = {"sum": F.sum, "min": F.min, "max": F.max,
                                                  "bool_and": F.bool_and, "bool_or": F.bool_or}


def _q(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")


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
    except Exception:  # e.g. a partial aggregate Spark cannot type: the model is rebuilt every time instead
        return False
    finally:
        ctx.spark.catalog.dropTempView(view)
    return same_columns(final, model)


def write_state(state: AggregateState, partial: DataFrame, path: str) -> None:
    """A full build's state (and DISTINCT set) from every partial row, into the version at ``path``."""
    if not state.distinct:
        _write(partial, f"{path}/_streamt_state")
        return
    staged = stage(partial, f"{path}/_streamt_partial")  # two writes, one pass over the input
    try:
        _write(pairs(state, staged), f"{path}/{SET}")
        _write(groups(state, staged), f"{path}/_streamt_state")
    finally:
        shutil.rmtree(f"{path}/_streamt_partial", ignore_errors=True)


def stage(df: DataFrame, path: str) -> DataFrame:
    """``df`` written to ``path`` and read back: what several jobs read is computed once, and a plan
    over it holds no query references (Spark Connect cannot nest a query that travels with its
    DataFrames in a view or in two branches of one plan)."""
    _write(df, path)
    return df.sparkSession.read.parquet(path)


def _write(df: DataFrame, path: str, mode: str = "error") -> None:
    df.write.mode(mode).parquet(path)
    collect_flows(df)  # the metrics of observed inputs it read (Spark Connect)


def final_frame(ctx: RunContext, state: AggregateState, groups_: DataFrame | str, names: list[str]) -> DataFrame:
    """The model's rows computed from state rows: a DataFrame, or the state stored in the version at a path."""
    view = f"streamt_state_{uuid.uuid4().hex[:12]}"
    rows = ctx.spark.read.parquet(f"{groups_}/_streamt_state") if isinstance(groups_, str) else groups_
    return sql_over(ctx.spark, state.final_sql(view, names), {view: rows})


class Merge:
    """The merge of the appended rows' partial rows (``delta``, staged: see :func:`stage`) into the
    state of version ``stored``.

    The merged state and the model's rows are independent Spark jobs over small inputs, so they run at
    once, each recomputing the small merge instead of waiting for the other's files."""

    def __init__(self, ctx: RunContext, state: AggregateState, stored: str, delta: DataFrame) -> None:
        self.ctx, self.state, self.stored = ctx, state, stored
        self.old = ctx.spark.read.parquet(f"{stored}/_streamt_state")
        self.delta = delta

    def fits(self) -> bool:
        """Whether the appended rows' partial rows have the stored state's columns."""
        return same_columns(groups(self.state, self.delta).schema, self.old.schema)

    def _append_new_pairs(self, path: str) -> DataFrame | None:
        """Extend the set in the version at ``path`` with the delta's pairs not in the stored set yet
        (hard links to its files, then one file of the new pairs); those pairs, read back from it
        (None: no new pair)."""
        state = self.state
        stored_set, new_set = Path(self.stored) / SET, Path(path) / SET
        seen = self.ctx.spark.read.parquet(str(stored_set))
        mine = pairs(state, self.delta)  # unique already: the partial rows are grouped by keys and values
        cond = reduce(lambda a, b: a & b, (mine[c].eqNullSafe(seen[c]) for c in (*state.keys, *state.distinct)))
        linked = {p.relative_to(stored_set) for p in stored_set.rglob("*") if p.is_file()}
        link_data_files(stored_set, new_set)
        _write(mine.join(seen, cond, "left_anti"), str(new_set), "append")
        added = sorted(str(p) for p in new_set.rglob("*.parquet") if p.relative_to(new_set) not in linked)
        return self.ctx.spark.read.schema(seen.schema).parquet(*added) if added else None

    def merged(self, new_pairs: DataFrame | None) -> DataFrame:
        """The new state: the stored groups merged with the delta's values and the new pairs' tallies."""
        state, old = self.state, self.old
        keys = [_q(k) for k in state.keys]
        if not state.distinct:
            parts = [old, groups(state, self.delta)]
        else:
            def typed_null(name: str) -> Column:
                return F.lit(None).cast(old.schema[name].dataType).alias(name)

            values = _per_group(state, self.delta, [MERGES[v.merge](_q(v.name)).alias(v.name) for v in state.values])
            own_values, own_tallies = [_q(v.name) for v in state.values], [_q(t.name) for t in state.tallies]
            parts = [old, values.select(*keys, *own_values, *[typed_null(t.name) for t in state.tallies])]
            if new_pairs is not None:
                parts.append(_per_group(state, new_pairs, _tally_exprs(state)).select(
                    *keys, *[typed_null(v.name) for v in state.values], *own_tallies))
        both = reduce(lambda a, b: a.unionByName(b), parts)
        aggs = [MERGES[v.merge](_q(v.name)).cast(old.schema[v.name].dataType).alias(v.name) for v in state.values]
        aggs += [F.sum(_q(t.name)).cast(old.schema[t.name].dataType).alias(t.name) for t in state.tallies]
        merged = both.groupBy(*keys).agg(*aggs) if keys else both.agg(*aggs)
        return merged.select(*[_q(c) for c in old.columns])

    def writes(self, path: str, model_rows: Callable[[DataFrame, str], None]) -> None:
        """Extend the set (first: the tallies need its new pairs), then write the merged state and the
        model's rows (``model_rows(merged, path)``) into the version at ``path`` concurrently; the
        first failure is raised once both have ended."""
        merged = self.merged(self._append_new_pairs(path) if self.state.distinct else None)
        jobs: list[Callable[[], None]] = [lambda: _write(merged, f"{path}/_streamt_state"),
                                          lambda: model_rows(merged, path)]
        with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="streamt-merge") as pool:
            futures = [pool.submit(job) for job in jobs]
            wait(futures)
        for future in futures:
            future.result()
