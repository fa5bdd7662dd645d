"""Small helpers shared by the materializers: schemas, row-count observation, write options."""

from __future__ import annotations

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


def format_options(fmt: str) -> dict[str, str]:
    """Options that make a format read back what was written (csv keeps its header)."""
    return {"header": "true"} if fmt == "csv" else {}
