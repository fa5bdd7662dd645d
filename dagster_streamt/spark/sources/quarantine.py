"""Malformed source records go to the Delta table ``<warehouse>/<source>__quarantine/data`` and are counted.

One streaming query per source finds them, whatever model reads the source (table, view or stream):
Spark's file source (or Kafka source) with the checkpoint ``<checkpoints>/<source>__quarantine``
reads exactly the files (offsets) it has not read before, ``trigger(availableNow=True)``, and
each batch's records the parse put in the corrupt-record column are appended, with their file (or
topic/partition/offset) and the reason. Exactly once by the engine: the checkpoint knows the files
already read, and each commit's Delta transaction id (query id, batch id) makes a batch that a
killed run redoes a no-op (:class:`QuarantineBatches`: who commits, and why not Delta's sink). A
rerun without new files reads nothing; a file rewritten in place is not read again (Spark's file
source knows files by path), as no stream model would read it again.

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
from pathlib import Path
from typing import Any

from deltalake.exceptions import DeltaError
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ...spec.models import FILE_FORMATS, Source
from ...spec.project import Project
from ...sql.identifiers import quote
from ..conditions import conditions
from ..delta.delta_table import DELTA, current_commit, is_delta_table
from ..errors import ModelRunError
from ..run.progress import observed_total
from ..session.session import is_connect
from ..storage.object_lock import lock_at
from ..storage.paths import ProjectPaths
from ..storage.store import Loc, ObjectPath, open_delta, write_text
from ..storage.warehouse import Warehouse
from .source_schema import declared_ddl
from .sources import CORRUPT, LOCATOR, SourceRead, is_corrupt, read_source

log = logging.getLogger(__name__)
QUARANTINE_SCHEMA = ("source string, raw_record string, reason string, source_file string, "
                     "loaded_at timestamp, run_id string")
QUERY_ID = "sql.streaming.queryId"  # the local property a streaming query's batches run with (its id)
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
                   run_id: str, listing: str | None = None) -> int:
    """Run the source's quarantine query (``read``: the source as a stream, permissive) over what
    arrived since its last run; return the corrupt records it found.
    ``listing``: the :func:`listing_digest` of the source taken before this call; when the query has
    caught up with that very listing before, there is nothing to read and it does not start."""
    name = quarantine_name(read.source.name)
    metric = f"streamt_{name}"
    checkpoint = paths.checkpoint(name)
    target = warehouse.quarantine_dir(read.source.name)
    with lock_at(paths.checkpoint_lock(name), wait=True):
        if listing is not None and is_delta_table(target) and _caught_up(checkpoint) == listing:
            return 0
        _adopt_parquet_quarantine(spark, target, checkpoint)
        df = read.df.observe(metric, F.count(F.when(is_corrupt(), 1)).alias("bad"))
        stream = bad_rows(read.source, read.data_columns, df, run_id).writeStream.outputMode("append") \
            .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).queryName(f"{name}_{run_id}")
        batches = None if is_connect(spark) or isinstance(target, ObjectPath) else QuarantineBatches(target)
        # Delta's streaming sink on the server or an object store; on a local disk, the same commits cheaper
        query = stream.format(DELTA).start(str(target)) if batches is None else stream.foreachBatch(batches).start()
        try:
            query.awaitTermination()
        except Exception:
            if batches is not None and batches.error is not None:  # what Spark wrapped as the function's error
                raise batches.error from None
            raise
        if listing is not None:  # availableNow read everything there when it started: the listing too
            write_text(checkpoint / CAUGHT_UP, listing + "\n", durable=True)
        return batches.written if batches is not None else observed_total(query.recentProgress, metric, "bad")


class QuarantineBatches:
    """The quarantine query's sink in an embedded session on a local disk: each micro-batch's rows
    appended to the Delta table exactly once, as Delta's streaming sink would, without its cost.

    Delta's sink makes a replayed batch a no-op with a transaction id (the query's id, the batch id)
    in the same commit, and to look it up it replays the whole table's log in a Spark job (about a
    second of a run with new files, for a table that nobody reads in the run). Here delta-rs reads the
    transaction id from the log in milliseconds, and a batch of up to :attr:`LOCAL_ROWS` rows (the
    usual few malformed records) is collected and committed by delta-rs with its transaction id; a
    larger batch, or the table's first, is committed by Spark with the same id (``txnAppId``,
    ``txnVersion``). Both are Delta's own idempotent-write mechanism, so a table written by this sink and
    by Delta's (a run on the project's server) skips the other's replayed batches too."""

    LOCAL_ROWS = 10_000

    def __init__(self, target: Path) -> None:
        self.target = target
        self.written = 0  # corrupt records appended by this query
        self.error: Exception | None = None

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        try:
            self._append(batch, batch_id)
        except Exception as exc:  # Spark reports it as the function's traceback; the run reports this one
            self.error = exc
            raise

    def _append(self, batch: DataFrame, batch_id: int) -> None:
        app_id = batch.sparkSession.sparkContext.getLocalProperty(QUERY_ID)  # as Delta's sink takes it
        assert app_id is not None, "a streaming query's batch runs with its query's id"
        try:
            table = open_delta(self.target) if is_delta_table(self.target) else None
            done = table.transaction_version(app_id) if table is not None else None
        except DeltaError:  # a table delta-rs does not read: Spark writes it, and checks the id itself
            table, done = None, None
        if done is not None and done >= batch_id:
            return  # committed before the run that read it was killed: Spark replays it
        if table is not None and self._local(table, batch, app_id, batch_id):
            return
        batch.write.format(DELTA).mode("append").option("txnAppId", app_id) \
            .option("txnVersion", str(batch_id)).save(str(self.target))
        try:  # the commit just made (the checkpoint's lock keeps other writers out)
            metrics = open_delta(self.target).history(1)[0].get("operationMetrics", {})
        except DeltaError:  # a table delta-rs cannot read: Spark counts the batch (a skipped replay included)
            self.written += batch.count()
            return
        self.written += int(metrics.get("numOutputRows", 0))

    def _local(self, table: Any, batch: DataFrame, app_id: str, batch_id: int) -> bool:
        """Collect the batch and commit it with delta-rs when it is small; False when it is not (or delta-rs
        cannot write the table's protocol)."""
        from deltalake import CommitProperties, Transaction, write_deltalake

        rows = batch.limit(self.LOCAL_ROWS + 1).toArrow()
        if rows.num_rows > self.LOCAL_ROWS:
            return False
        if rows.num_rows:
            try:
                write_deltalake(table, rows, mode="append",
                                commit_properties=CommitProperties(app_transactions=[Transaction(app_id, batch_id)]))
            except DeltaError as exc:
                log.info("quarantine %s: delta-rs cannot append (%s); Spark does", self.target, exc)
                return False
        self.written += rows.num_rows
        return True


def quarantine_source(spark: SparkSession, project: Project, paths: ProjectPaths, warehouse: Warehouse,
                      source: Source, batch: SourceRead, run_id: str, listing: str | None = None) -> int:
    """:func:`run_quarantine` for a source the run's models read in batch (as ``batch``; ``listing``:
    its files' digest); 0 for sources whose records cannot be malformed (strictly parsed formats,
    a non-permissive ``mode``)."""
    read = stream_read(spark, project, source, batch)
    if not read.permissive:
        return 0
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
