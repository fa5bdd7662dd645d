"""Small helpers shared by the materializers: schemas, row-count observation, write options."""

from __future__ import annotations

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from .observed_views import ObservedViews

OUT_METRIC = "streamt_rows_out"


def schema_pairs(schema: StructType) -> list[tuple[str, str]]:
    """(column, Spark SQL type) pairs, the form results and Dagster metadata use."""
    return [(f.name, f.dataType.simpleString()) for f in schema.fields]


def counted(df: DataFrame, name: str) -> tuple[DataFrame, Observation]:
    """``df`` observed so the action that writes it also counts its rows (no second pass)."""
    obs = Observation(name)
    return df.observe(obs, F.count(F.lit(1)).alias("rows")), obs


def observed_rows(observed: ObservedViews, obs: Observation, name: str | None = None) -> int | None:
    """The rows :func:`counted` saw; None when the action returned no count (unknown is not 0 rows).
    ``name``: the observation's name, for the metrics a Spark Connect action returned (to ``observed``)."""
    rows = observed.metrics(obs, name).get("rows")
    return int(rows) if rows is not None else None


def format_options(fmt: str) -> dict[str, str]:
    """Options that make a format read back what was written (csv keeps its header)."""
    return {"header": "true"} if fmt == "csv" else {}
