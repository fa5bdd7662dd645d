"""Continuous tests inside a streaming query: the materializer calls these from ``foreachBatch``.

Row-level assertions (not_null, accepted_values, range, expression_is_true, custom_sql ``where``,
relationships against a static relation, and unique *within the micro-batch*) produce the offending
records themselves, which the materializer appends to a violations table (:data:`VIOLATIONS_SCHEMA`)
so they can be read back (streamt's continuous tests never were). Aggregate assertions (unique,
row_count, distribution, freshness, custom_sql ``sql:``, accepted_types) are evaluated **per
micro-batch** with :func:`evaluate_batch`; throughput and max_lag are judged from the query's
progress with :func:`~dagster_streamt.checks.evaluate.check_throughput` /
:func:`~dagster_streamt.checks.evaluate.check_max_lag`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..spec.models import Test
from ..sql.identifiers import quote as _quoted
from .assertions import parse_assertions
from .kinds import KINDS, Mode, StreamProgress
from .params import Relationships, Unique
from .parsed import ParsedAssertion
from .results import TestResult
from .runner import run_test
from .sql import build_test_sql, ident

Resolve = Callable[[str, str], str]

VIOLATIONS_SCHEMA = ("record string, test string, assertion string, violation string, batch_id bigint, "
                     "detected_at timestamp")
VIOLATION_TYPES: dict[str, str] = {n: k.record_violation for n, k in sorted(KINDS.items()) if k.record_violation}


def evaluation_mode(a: ParsedAssertion) -> Mode:
    """How a continuous test evaluates ``a``: per offending record, per micro-batch, or from progress."""
    return KINDS[a.name].mode(a.params)


def violations_frame(batch_df: DataFrame, test: Test, batch_id: int, now: datetime | None = None, *,
                     resolve: Resolve | None = None) -> DataFrame:
    """Offending records of ``batch_df`` for the row-level assertions of ``test``, one row per
    (record, assertion) with the record as JSON. Relationships need ``resolve`` (a static relation
    to check keys against); without it they raise rather than pass silently."""
    parsed, issues = parse_assertions(test)
    if issues:
        raise ValueError(f"test {test.name!r} has invalid assertions: {issues[0].message}")
    spark = batch_df.sparkSession
    now = now or datetime.now(UTC)
    record = F.to_json(F.struct(*(F.col(_quoted(c)) for c in batch_df.columns))).alias("record")
    rows = [a for a in parsed if evaluation_mode(a) == "row"]
    built = {b.assertion.index: b for b in build_test_sql(rows, "`__batch`", resolve=resolve).assertions}
    frames: list[DataFrame] = []
    simple = [a for a in rows if KINDS[a.name].record_check == "predicate"]
    if simple:
        hits = F.array(*(F.when(F.expr(str(built[a.index].violation_predicate)), F.struct(*_labels(a)))
                         for a in simple))
        exploded = batch_df.select(record, F.explode(F.filter(hits, lambda h: h.isNotNull())).alias("v"))
        frames.append(exploded.select("record", "v.assertion", "v.violation"))
    for a in rows:
        if KINDS[a.name].record_check == "duplicates" and isinstance(a.params, Unique):
            keys = [F.col(ident(c)) for c in a.params.keys]
            keyed = reduce(lambda x, y: x & y, (k.isNotNull() for k in keys))
            counted = batch_df.withColumn("__streamt_n", F.count(F.lit(1)).over(Window.partitionBy(*keys)))
            frames.append(counted.where(keyed & (F.col("__streamt_n") > 1)).select(record, *_labels(a)))
        elif KINDS[a.name].record_check == "references" and isinstance(a.params, Relationships):
            frames.append(_missing_references(batch_df, a, a.params, record, resolve))
    if not frames:
        return spark.createDataFrame([], VIOLATIONS_SCHEMA)
    return reduce(DataFrame.unionByName, frames).select(
        "record", F.lit(test.name).alias("test"), "assertion", "violation",
        F.lit(int(batch_id)).cast("bigint").alias("batch_id"), F.lit(now).cast("timestamp").alias("detected_at"))


def _labels(a: ParsedAssertion) -> tuple[Column, Column]:
    return F.lit(a.label).alias("assertion"), F.lit(VIOLATION_TYPES[a.name]).alias("violation")


def _missing_references(batch_df: DataFrame, a: ParsedAssertion, p: Relationships, record: Column,
                        resolve: Resolve | None) -> DataFrame:
    if resolve is None:
        raise ValueError(f"{a.label}: a continuous relationships check needs `resolve` to read "
                         f"{p.target[0]} {p.target[1]!r}")
    key = ident(p.target_field)
    keys = batch_df.sparkSession.sql(
        f"SELECT DISTINCT {key} AS __streamt_key FROM {resolve(*p.target)} WHERE {key} IS NOT NULL")
    col = F.col(ident(p.column))
    return (batch_df.where(col.isNotNull()).join(keys, col == keys["__streamt_key"], "left_anti")
            .select(record, *_labels(a)))


def evaluate_batch(batch_df: DataFrame, test: Test, batch_id: int, *, resolve: Resolve | None = None,
                   now: datetime | None = None, progress: StreamProgress | None = None, sample_rows: int = 5,
                   variables: Mapping[str, Any] | None = None,
                   select: Callable[[ParsedAssertion], bool] | None = None) -> TestResult:
    """Run ``test`` on one micro-batch (unique, row_count, distribution... hold *per batch*): the
    assertions ``select`` keeps, by default all but progress-based ones unless ``progress`` is given."""
    view = f"__streamt_batch_{batch_id}_{uuid.uuid4().hex[:8]}"
    batch_df.createOrReplaceTempView(view)
    try:
        return run_test(batch_df.sparkSession, test, f"`{view}`", resolve=resolve, now=now, progress=progress,
                        sample_rows=sample_rows, variables=variables,
                        select=select or (lambda a: progress is not None or not KINDS[a.name].continuous_only))
    finally:
        batch_df.sparkSession.catalog.dropTempView(view)


__all__ = ["VIOLATIONS_SCHEMA", "VIOLATION_TYPES", "evaluate_batch", "evaluation_mode", "violations_frame"]
