"""Malformed source records go to the Delta table ``<warehouse>/<source>__quarantine/data`` and are counted.

One streaming query per source finds them, whatever model reads the source (table, view or stream):
Spark's file source (or Kafka source) with the checkpoint ``<checkpoints>/<source>__quarantine``
reads exactly the files (offsets) it has not read before, ``trigger(availableNow=True)``, and
Delta's streaming sink appends the records the parse put in the corrupt-record column, with their
file (or topic/partition/offset) and the reason. Exactly once by the engine: the checkpoint knows
the files already read, and the sink's transaction id (query id, batch id) makes a batch that a
killed run redoes a no-op. A rerun without new files reads nothing; a file rewritten in place is
not read again (Spark's file source knows files by path), as no stream model would read it again.

A query that has nothing to read still costs a streaming query's start (seconds in a fresh JVM). So
after a query over a local file source has caught up, the digest of the listing it started from is kept
beside its checkpoint (``_streamt_caught_up``); a run whose listing has the same digest has nothing
new for the query and skips it. The digest only ever skips a query that would read nothing: the
checkpoint still decides what is new, and removing the checkpoint removes the digest with it.
"""

from __future__ import annotations

import logging
import re
import shutil
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ...spec.models import FILE_FORMATS, Source
from ...spec.project import Project
from ...sql.identifiers import quote
from ..conditions import conditions
from ..delta.delta_table import DELTA, current_commit, is_delta_table
from ..errors import ModelRunError
from ..run.progress import observed_total
from ..storage.object_lock import lock_at
from ..storage.paths import ProjectPaths
from ..storage.store import Loc, ObjectPath, write_text
from ..storage.warehouse import Warehouse
from .source_schema import declared_ddl
from .sources import CORRUPT, LOCATOR, SourceRead, is_corrupt, read_source

log = logging.getLogger(__name__)
QUARANTINE_SCHEMA = ("source string, raw_record string, reason string, source_file string, "
                     "loaded_at timestamp, run_id string")
Counts = tuple[int, int]  # (records read, corrupt records)
CAUGHT_UP = "_streamt_caught_up"  # in the query's checkpoint folder: the listing digest it has read through


def quarantine_name(source: str) -> str:
    return f"{source}__quarantine"


def reason(source: Source, data_columns: tuple[str, ...]) -> Column:
    """Why a corrupt record was set aside: nothing parsed, or a value that does not fit its column."""
    fmt = source.resolved_format
    all_null = reduce(lambda a, b: a & b, (F.col(quote(c)).isNull() for c in data_columns), F.lit(True))
    return F.when(all_null, F.lit(f"malformed {fmt} record: could not be parsed")).otherwise(
        F.lit(f"{fmt} record does not match the declared columns (a value of the wrong type or a missing field)"))


def bad_rows(source: Source, data_columns: tuple[str, ...], df: DataFrame, run_id: str) -> DataFrame:
    """Quarantine rows for the corrupt records of ``df`` (the reason reads every data column, so
    Spark parses them all: it refuses a scan of the corrupt-record column alone)."""
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
    target = warehouse.quarantine_dir(source)
    if not is_delta_table(target):
        return spark.createDataFrame([], QUARANTINE_SCHEMA)
    return spark.read.format(DELTA).load(str(target))


def quarantined_total(spark: SparkSession, warehouse: Warehouse, source: str) -> int:
    """Rows in the source's quarantine table: the corrupt records of every file (offset) read so far,
    from the row counts of its Delta log (delta-rs: no Spark job); Spark counts when the log has none."""
    commit = current_commit(warehouse.quarantine_dir(source))
    if commit is not None and commit.rows is not None:
        return commit.rows
    return read_quarantine(spark, warehouse, source).count()


def _caught_up(checkpoint: Loc) -> str | None:
    try:
        return (checkpoint / CAUGHT_UP).read_text(encoding="utf-8").strip()
    except OSError:
        return None


def stream_read(spark: SparkSession, project: Project, source: Source, batch: SourceRead | None = None) -> SourceRead:
    """``source`` read as a stream. Spark's file stream reads folders: a source that is one file is
    read as its folder filtered to that file's name. A file source without declared columns is read
    with the columns ``batch`` (the run's batch read) found, as the models read it."""
    schema = None
    if batch is not None and source.resolved_format in FILE_FORMATS and declared_ddl(source) is None:
        fields = [f for f in batch.df.schema.fields if f.name in batch.data_columns]
        schema = ", ".join(f"{quote(f.name)} {f.dataType.simpleString()}" for f in fields) or None
    if source.resolved_format in FILE_FORMATS and source.path and "://" not in source.path:
        path = project.resolve_path(source.path)
        if path.is_file():
            options = {**source.options, "pathGlobFilter": re.sub(r"([*?\[\]{}\\])", r"\\\1", path.name)}
            source = source.model_copy(update={"path": str(path.parent), "options": options})
    return read_source(spark, project, source, streaming=True, schema=schema)


def _adopt_parquet_quarantine(spark: SparkSession, target: Loc, checkpoint: Loc) -> None:
    """A quarantine written before it was a Delta table (Parquet files, a JSON ledger of files read).
    With the query's checkpoint beside it, the rows and the checkpoint agree: it becomes a Delta
    table in place (``CONVERT TO DELTA``). Without one (batch reads kept a ledger), the query is
    about to read every file again: the old rows go, and the query writes them anew."""
    if isinstance(target, ObjectPath) or (target / "_delta_log").is_dir() or not any(target.glob("*.parquet")):
        # (never on an object store: the Parquet quarantine predates them; and a log folder, even one whose
        # first commit a kill interrupted, means a Delta quarantine whose files must not be converted)
        return
    if checkpoint.is_dir():
        spark.sql(f"CONVERT TO DELTA parquet.`{target}`")
        log.info("quarantine %s: converted its Parquet files to a Delta table", target)
    else:
        shutil.rmtree(target)
        log.info("quarantine %s: rebuilt as a Delta table from the source's files", target)
    (target / "_streamt_ledger.json").unlink(missing_ok=True)


def run_quarantine(spark: SparkSession, paths: ProjectPaths, warehouse: Warehouse, read: SourceRead,
                   run_id: str, listing: str | None = None) -> Counts:
    """Run the source's quarantine query (``read``: the source as a stream, permissive) over what
    arrived since its last run; return the records it read and the corrupt ones among them.
    ``listing``: the :func:`listing_digest` of the source taken before this call; when the query has
    caught up with that very listing before, there is nothing to read and it does not start."""
    name = quarantine_name(read.source.name)
    metric = f"streamt_{name}"
    checkpoint = paths.checkpoint(name)
    target = warehouse.quarantine_dir(read.source.name)
    with lock_at(paths.checkpoint_lock(name), wait=True):
        if listing is not None and is_delta_table(target) and _caught_up(checkpoint) == listing:
            return 0, 0
        _adopt_parquet_quarantine(spark, target, checkpoint)
        df = read.df.observe(metric, F.count(F.lit(1)).alias("rows"), F.count(F.when(is_corrupt(), 1)).alias("bad"))
        query = (bad_rows(read.source, read.data_columns, df, run_id).writeStream.format(DELTA)
                 .outputMode("append").option("checkpointLocation", str(checkpoint))
                 .trigger(availableNow=True).queryName(f"{name}_{run_id}").start(str(target)))
        query.awaitTermination()
        progress = query.recentProgress
        if listing is not None:  # availableNow read everything there when it started: the listing too
            write_text(checkpoint / CAUGHT_UP, listing + "\n", durable=True)
        return observed_total(progress, metric, "rows"), observed_total(progress, metric, "bad")


def quarantine_source(spark: SparkSession, project: Project, paths: ProjectPaths, warehouse: Warehouse,
                      source: Source, batch: SourceRead, run_id: str, listing: str | None = None) -> Counts:
    """:func:`run_quarantine` for a source the run's models read in batch (as ``batch``; ``listing``:
    its files' digest); (0, 0) for sources whose records cannot be malformed (strictly parsed formats,
    a non-permissive ``mode``)."""
    read = stream_read(spark, project, source, batch)
    if not read.permissive:
        return 0, 0
    try:
        return run_quarantine(spark, paths, warehouse, read, run_id, listing)
    except ModelRunError:
        raise
    except Exception as exc:
        if {"DELTA_METADATA_MISMATCH", "DELTA_FAILED_TO_MERGE_FIELDS"} & set(conditions(exc)):  # its schema
            raise ModelRunError(
                f"source {source.name}: its quarantine table {warehouse.quarantine_dir(source.name)} has columns "
                f"other than {QUARANTINE_SCHEMA}; move it away (the next run writes a new one)") from exc
        raise
