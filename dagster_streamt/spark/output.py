"""Small helpers shared by the materializers: schemas, row-count observation, write options."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

OUT_METRIC = "streamt_rows_out"


def schema_pairs(schema: StructType) -> list[tuple[str, str]]:
    """(column, Spark SQL type) pairs, the form results and Dagster metadata use."""
    return [(f.name, f.dataType.simpleString()) for f in schema.fields]


def counted(df: DataFrame, name: str) -> tuple[DataFrame, Observation]:
    """``df`` observed so the action that writes it also counts its rows (no second pass)."""
    obs = Observation(name)
    return df.observe(obs, F.count(F.lit(1)).alias("rows")), obs


def observed_rows(obs: Observation) -> int:
    return int(obs.get.get("rows") or 0)


def observed_metrics(obs: Observation) -> dict[str, Any]:
    """The metrics of an observation whose action has ended; empty when that action did not run the
    observed plan (optimized away, or a join cut short), instead of waiting for them forever."""
    future = getattr(getattr(obs, "_jo", None), "future", None)  # classic pyspark: ``get`` would block
    if future is not None and not future().isCompleted():
        return {}
    try:
        return dict(obs.get)
    except Exception:  # classic pyspark fails on an observation filled without values
        return {}


def format_options(fmt: str) -> dict[str, str]:
    """Options that make a format read back what was written (csv keeps its header)."""
    return {"header": "true"} if fmt == "csv" else {}
