"""Malformed source records go to ``<source>__quarantine`` (path-based, appended) and are counted.

Appends are idempotent: a row is only added when its file (or Kafka offset) has not been quarantined
before, so a batch model rereading the same files, or a replayed micro-batch, adds nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from pathlib import Path

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from ..spec.models import Source
from .locks import FileLock
from .paths import ProjectPaths
from .progress import observed_total
from .sources import CORRUPT, LOCATOR, SourceRead, is_corrupt
from .warehouse import Warehouse

QUARANTINE_SCHEMA = ("source string, raw_record string, reason string, source_file string, "
                     "loaded_at timestamp, run_id string")


def quarantine_name(source: str) -> str:
    return f"{source}__quarantine"


def reason(source: Source, data_columns: tuple[str, ...]) -> Column:
    """Why a corrupt record was set aside: nothing parsed, or a value that does not fit its column."""
    fmt = source.resolved_format
    all_null = reduce(lambda a, b: a & b, (F.col(f"`{c}`").isNull() for c in data_columns), F.lit(True))
    return F.when(all_null, F.lit(f"malformed {fmt} record: could not be parsed")).otherwise(
        F.lit(f"{fmt} record does not match the declared columns (a value of the wrong type or a missing field)"))


def bad_rows(source: Source, data_columns: tuple[str, ...], df: DataFrame, run_id: str) -> DataFrame:
    """Quarantine rows for the corrupt records of ``df`` (a whole read, or one micro-batch of it)."""
    return df.where(is_corrupt()).select(
        F.lit(source.name).alias("source"),
        F.col(CORRUPT).alias("raw_record"),
        reason(source, data_columns).alias("reason"),
        F.col(LOCATOR).alias("source_file"),
        F.current_timestamp().alias("loaded_at"),
        F.lit(run_id).alias("run_id"),
    )


def read_quarantine(spark: SparkSession, warehouse: Warehouse, source: str) -> DataFrame:
    """Everything quarantined for ``source`` so far (empty when nothing was)."""
    return spark.read.schema(QUARANTINE_SCHEMA).parquet(str(_ensure_dir(warehouse.quarantine_dir(source))))


def _ensure_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def append_new(spark: SparkSession, target: Path, rows: DataFrame) -> None:
    """Append ``rows`` whose file was not quarantined before, under a lock (many processes append)."""
    _ensure_dir(target)
    with FileLock(target.parent / ".lock", wait=True):
        if next(target.glob("*.parquet"), None) is not None:  # the first rows need no lookup
            seen = spark.read.schema(QUARANTINE_SCHEMA).parquet(str(target)).select("source_file").distinct()
            rows = rows.join(seen, "source_file", "left_anti")
        rows.write.mode("append").parquet(str(target))


def quarantine_batch(spark: SparkSession, warehouse: Warehouse, read: SourceRead, run_id: str) -> tuple[int, int]:
    """One pass over a batch read: quarantine new corrupt rows; return (rows read, corrupt rows)."""
    obs = Observation(f"streamt_quarantine_{read.source.name}_{run_id}")
    observed = read.df.observe(obs, F.count(F.lit(1)).alias("rows"),
                               F.count(F.when(is_corrupt(), 1)).alias("bad"))
    bad = bad_rows(read.source, read.data_columns, observed, run_id).cache()
    try:
        if bad.count():  # the one pass (it fills the observation); most runs have nothing to quarantine
            append_new(spark, warehouse.quarantine_dir(read.source.name), bad)
    finally:
        bad.unpersist()
    metrics = obs.get
    return int(metrics.get("rows") or 0), int(metrics.get("bad") or 0)


@dataclass(frozen=True)
class _QuarantineBatch:
    """foreachBatch function; plain picklable fields so that it also runs on a Spark Connect server."""

    source: Source
    data_columns: tuple[str, ...]
    target: str
    run_id: str

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        rows = bad_rows(self.source, self.data_columns, batch, self.run_id).cache()
        try:
            if not rows.isEmpty():  # no read of the quarantine folder, no empty file, for clean batches
                append_new(batch.sparkSession, Path(self.target), rows)
        finally:
            rows.unpersist()


def quarantine_stream(spark: SparkSession, paths: ProjectPaths, warehouse: Warehouse, read: SourceRead,
                      run_id: str) -> int:
    """Run the source's quarantine query over the data that arrived since its last run; return the
    number of corrupt records it saw. Its own checkpoint makes it exactly-once per source."""
    name = quarantine_name(read.source.name)
    metric = f"streamt_{name}"
    with FileLock(paths.checkpoint_lock(name), wait=True):
        df = read.df.observe(metric, F.count(F.when(is_corrupt(), 1)).alias("bad"))
        target = str(_ensure_dir(warehouse.quarantine_dir(read.source.name)))
        query = (df.writeStream.foreachBatch(_QuarantineBatch(read.source, read.data_columns, target, run_id))
                 .option("checkpointLocation", str(paths.checkpoint(name)))
                 .trigger(availableNow=True).queryName(f"{name}_{run_id}").start())
        query.awaitTermination()
        return observed_total(query.recentProgress, metric, "bad")
