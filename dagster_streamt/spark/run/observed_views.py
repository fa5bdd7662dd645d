"""Temporary views whose reads are observed (row counts, corrupt records), on both kinds of session.

An embedded session fills an ``Observation`` whatever plan it ends up in. Spark Connect fills it
only when the observed DataFrame is part of the plan the client sent: a query that reads the view by
name gets no metrics back. So on Spark Connect, :meth:`ObservedViews.sql` hands the observed
DataFrames to the query as references (``spark.sql(text, view=df)``) instead of by name, and
:meth:`ObservedViews.collect` keeps the metrics the server returns with the action (its "flows"), which
:meth:`ObservedViews.metrics` then finds by the observation's name. Both live with the session's views
(one :class:`ObservedViews` per run and session), nowhere in the process at large.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, Observation, SparkSession

from ...sql.identifiers import quote as _quote
from ..session.session import is_connect


@dataclass
class ObservedViews:
    frames: dict[str, DataFrame] = field(default_factory=dict)  # view -> observed DataFrame (Spark Connect)
    flows: dict[str, dict[str, Any]] = field(default_factory=dict)  # observation -> metrics an action returned
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def register(self, spark: SparkSession, view: str, df: DataFrame) -> None:
        df.createOrReplaceTempView(view)
        if is_connect(spark):
            with self.lock:
                self.frames[view] = df

    def sql(self, spark: SparkSession, text: str) -> DataFrame:
        """``spark.sql(text)``, with the observed views it names passed as DataFrames on Spark Connect."""
        return sql_over(spark, text, self._used(spark, text))

    def refers(self, spark: SparkSession, text: str) -> bool:
        """Whether :meth:`sql` of ``text`` carries DataFrame references (see :func:`sql_over`)."""
        return bool(self._used(spark, text))

    def _used(self, spark: SparkSession, text: str) -> dict[str, DataFrame]:
        if not is_connect(spark):
            return {}
        with self.lock:
            return {view: df for view, df in self.frames.items() if _quote(view) in text}

    def collect(self, df: DataFrame) -> None:
        """After an action on ``df`` (Spark Connect): keep the metrics of every observation it returned."""
        info = getattr(df, "executionInfo", None) if is_connect(df.sparkSession) else None
        if info is None:
            return
        with self.lock:
            for name, pairs in info.flows:
                self.flows[name] = dict(pairs)

    def metrics(self, obs: Observation, name: str | None = None) -> dict[str, Any]:
        """The metrics of an observation whose action has ended; empty when that action did not run the
        observed plan (optimized away, or a join cut short), instead of waiting for them forever.
        ``name``: the observation's name, to find metrics :meth:`collect` kept."""
        future = getattr(getattr(obs, "_jo", None), "future", None)  # classic pyspark: ``get`` would block
        if future is not None and not future().isCompleted():
            return {}
        try:
            metrics = dict(obs.get)
        except Exception:  # classic pyspark fails on an observation filled without values
            metrics = {}
        if not metrics and name is not None:
            with self.lock:
                metrics = self.flows.pop(name, {})
        return metrics


def sql_over(spark: SparkSession, text: str, frames: dict[str, DataFrame]) -> DataFrame:
    """``text`` run with each of ``frames`` (view name -> DataFrame) readable under its name. On Spark
    Connect the DataFrames travel with the query as references: a temporary view over a DataFrame that
    itself holds such references cannot be created there, and an observation must be in the plan."""
    if not is_connect(spark):
        for view, df in frames.items():
            df.createOrReplaceTempView(view)
        return spark.sql(text)
    if not frames:
        return spark.sql(text)
    escaped = text.replace("{", "{{").replace("}", "}}")
    refs: dict[str, Any] = {}
    for i, (view, df) in enumerate(sorted(frames.items())):
        escaped = escaped.replace(_quote(view), "{" + f"streamt_frame_{i}" + "}")
        refs[f"streamt_frame_{i}"] = df
    return spark.sql(escaped, **refs)

