"""An aggregation table's state in Spark: checking that it reproduces the model's columns, merging
the state of appended rows into the stored one, and computing the model's rows from it
(:mod:`dagster_streamt.sql.aggregate_state` splits the SQL)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..sql.aggregate_state import AggregateState
from .context import RunContext

MERGES: dict[str, Callable[[Column], Column]] = {"sum": F.sum, "min": F.min, "max": F.max,
                                                  "bool_and": F.bool_and, "bool_or": F.bool_or}


def _q(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")


def same_columns(a: StructType, b: StructType) -> bool:
    """Same column names and types, in order (nullability aside: a small delta may prove more)."""
    return [(f.name, f.dataType.simpleString()) for f in a.fields] == \
        [(f.name, f.dataType.simpleString()) for f in b.fields]


def state_matches(ctx: RunContext, state: AggregateState, partial: StructType, model: StructType) -> bool:
    """Whether the final query over state rows of schema ``partial`` gives exactly the model's column
    names and types (an ``avg`` of decimals, say, would not): checked on an empty state, so by
    analysis only."""
    view = f"streamt_state_check_{uuid.uuid4().hex[:12]}"
    try:
        ctx.spark.createDataFrame([], partial).createOrReplaceTempView(view)
        final = ctx.spark.sql(state.final_sql(view, list(model.names))).schema
    except Exception:  # e.g. a partial aggregate Spark cannot type: the model is rebuilt every time instead
        return False
    finally:
        ctx.spark.catalog.dropTempView(view)
    return same_columns(final, model)


def final_frame(ctx: RunContext, state: AggregateState, path: str, names: list[str]) -> DataFrame:
    """The model's rows computed from the state stored at ``path``."""
    view = f"streamt_state_{uuid.uuid4().hex[:12]}"
    ctx.spark.read.parquet(path).createOrReplaceTempView(view)
    return ctx.spark.sql(state.final_sql(view, names))


def merged_state(ctx: RunContext, state: AggregateState, stored: str, delta: DataFrame) -> DataFrame | None:
    """The stored state at ``stored`` merged with ``delta`` (the state of the appended rows), typed as
    the stored one; None when the two do not have the same columns."""
    old = ctx.spark.read.parquet(stored)
    if not same_columns(old.schema, delta.schema):
        return None
    both = old.unionByName(delta)
    aggs = [MERGES[c.merge](_q(c.name)).cast(old.schema[c.name].dataType).alias(c.name) for c in state.values]
    keys = [_q(k) for k in state.keys]
    merged = both.groupBy(*keys).agg(*aggs) if keys else both.agg(*aggs)
    return merged.select(*[_q(c) for c in old.columns])
