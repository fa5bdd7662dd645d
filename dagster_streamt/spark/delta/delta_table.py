"""Tables stored as Delta Lake: the default format of ``table`` models and stream outputs.

A table lives in ``<warehouse>/<model>/data/`` (``_delta_log/`` beside its Parquet files). Every refresh
is one Delta commit (an overwrite, or an append of the rows of new input files), so a reader sees the
previous version or the new one, and any engine that reads Delta reads the table.

What the refresh planner needs to know about the current version (the input files it was built from and
a hash of its SQL and settings: :class:`.refresh_record.RefreshRecord`) travels in that same commit as
its ``userMetadata``: the record and the rows can never disagree, and no file of ours sits beside the log.
The log is read here with delta-rs (the ``deltalake`` package): no Spark job to plan a refresh.

What changed in a table since a reader last read it is the log's to say too (:func:`change_since`): the
commits after that version, each a blind append or not, and their rows read back through Delta's Change
Data Feed (every table here keeps one: :data:`CHANGE_FEED`), never from the data files directly, so
deletion vectors and column mapping hold for increments as for whole reads.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deltalake.exceptions import DeltaError

from ...sql.identifiers import delta_path
from ..storage.store import Loc, open_delta
from .refresh_record import RefreshRecord, record_from_json, record_json

if TYPE_CHECKING:  # pyspark is imported where Spark runs: a run with nothing new reads commits without it
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

log = logging.getLogger(__name__)

DELTA = "delta"
LOG = "_delta_log"
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"  # a commit's metadata when no writer option can
CHANGE_FEED = "delta.enableChangeDataFeed"  # on for the tables written here: readers follow their appends
APPENDS = frozenset({"WRITE", "STREAMING UPDATE"})  # operations that only add rows when blind appends
_CDF_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")


def _log_names(path: Loc) -> list[str]:
    try:
        return [p.name for p in (path / LOG).iterdir()]
    except OSError:
        return []


def is_delta_table(path: Loc) -> bool:
    """Whether ``path`` holds a Delta table (a log with at least one commit)."""
    return any(n.endswith((".json", ".parquet")) for n in _log_names(path))


def current_version(path: Loc) -> int | None:
    """The table's latest version: the highest commit file of its log (no log read); None if no table."""
    numbers = [int(n[:-5]) for n in _log_names(path) if n.endswith(".json") and n[:-5].isdigit()]
    return max(numbers) if numbers else None


@dataclass(frozen=True)
class Commit:
    """The current version of a Delta table as this package wrote it."""

    version: int
    files: dict[str, Any]  # active data files, relative to the table's folder -> their size in bytes
    rows: int | None  # rows of the whole table (from the files' statistics), None when unknown
    record: RefreshRecord | None  # what the version was built from, when the commit carries it
    table_id: str = ""  # Delta's id of the table: a table deleted and created again has a new one
    change_feed: bool = False  # whether the table keeps a Change Data Feed (:data:`CHANGE_FEED`)
    schema_json: str | None = None  # the table's schema as Spark's StructType JSON (Delta's own schemaString)
    partition_columns: tuple[str, ...] = ()
    user_metadata: str | None = None  # the commit's userMetadata as written (a refresh record is parsed above)
    # rows per value of the first partition column, from the files' statistics (None: not partitioned, a
    # file without a count, or rows hidden by deletion vectors, which are not attributed to partitions)
    partition_rows: dict[str, int] | None = None

    def schema(self) -> StructType | None:
        """The table's schema as Spark reads it (with Delta's field metadata: column mapping's names)."""
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self.schema_json)) if self.schema_json else None

    def columns(self) -> list[tuple[str, str]]:
        """(column, Spark SQL type) pairs, as :func:`~dagster_streamt.spark.run.output.schema_pairs` gives
        them for :meth:`schema`, read from the JSON without importing pyspark (a run that decides nothing is
        new reports each table's columns from its Delta log)."""
        fields = json.loads(self.schema_json)["fields"] if self.schema_json else []
        return [(f["name"], _spark_type(f["type"])) for f in fields]


# Delta's names of primitive types (PROTOCOL.md, "Schema Serialization Format") that Spark SQL spells otherwise
_SQL_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}


def _spark_type(t: Any) -> str:
    """A Delta schema type as Spark's ``DataType.simpleString`` writes it."""
    if isinstance(t, str):
        return _SQL_NAMES.get(t, t)
    if t["type"] == "struct":
        return "struct<" + ",".join(f"{f['name']}:{_spark_type(f['type'])}" for f in t["fields"]) + ">"
    if t["type"] == "array":
        return f"array<{_spark_type(t['elementType'])}>"
    return f"map<{_spark_type(t['keyType'])},{_spark_type(t['valueType'])}>"


def current_commit(path: Loc) -> Commit | None:
    """The table's current version, or None when there is no readable table at ``path``."""
    if not is_delta_table(path):
        return None
    try:
        table = open_delta(path)
        version = int(table.version())
        actions = table.get_add_actions(flatten=True)
        columns = {name: actions.column(name).to_pylist() for name in actions.schema.names}
        paths, sizes = columns.get("path", []), columns.get("size_bytes", [])
        counts = columns.get("num_records")
        rows = sum(int(n) for n in counts) if counts is not None and None not in counts else None
        deleted = _deleted_rows(table) if rows is not None else 0
        if rows is not None:
            rows -= deleted
        metadata = table.metadata()
        by_partition = _partition_rows(columns, list(metadata.partition_columns)) if not deleted else None
        history = table.history(1)
        schema_json = table.schema().to_json()
    except (DeltaError, OSError) as exc:  # a protocol delta-rs does not read, a log mid-write: a full rebuild
        log.warning("the Delta table at %s cannot be read without Spark (%s): its model is rebuilt", path, exc)
        return None
    meta = history[0].get("userMetadata") if history and int(history[0].get("version", version)) == version else None
    record = record_from_json(meta, len(paths)) if isinstance(meta, str) else None
    return Commit(version, dict(zip(paths, sizes, strict=True)), rows, record, str(metadata.id),
                  metadata.configuration.get(CHANGE_FEED, "false").lower() == "true", schema_json,
                  tuple(metadata.partition_columns), meta if isinstance(meta, str) else None, by_partition)


def _partition_rows(columns: dict[str, list[Any]], partition_columns: list[str]) -> dict[str, int] | None:
    """Rows per value of the first partition column, summed over the active files' record counts."""
    if not partition_columns:
        return None
    values, counts = columns.get(f"partition.{partition_columns[0]}"), columns.get("num_records")
    if values is None or counts is None or None in counts:
        return None
    out: dict[str, int] = {}
    for value, count in zip(values, counts, strict=True):
        out[str(value)] = out.get(str(value), 0) + int(count)
    return dict(sorted(out.items()))


def _deleted_rows(table: Any) -> int:
    """Rows the table's deletion vectors hide (its files' statistics still count them)."""
    if "deletionVectors" not in (table.protocol().reader_features or []):
        return 0
    import pyarrow as pa

    vectors = pa.table(table.deletion_vectors().read_all()).column("selection_vector").to_pylist()
    return sum(v.count(False) for v in vectors)


@dataclass(frozen=True)
class Appended:
    """Rows only appended to a table between two of its versions: readable as Delta's change feed."""

    after: int  # the version the reader read last
    upto: int  # the version it reads now
    rows: int | None  # rows those commits added (their operation metrics), None when one does not say


def change_since(path: Loc, now: Commit, read: tuple[str, int]) -> Appended | str | None:
    """What happened to the table at ``path`` (current version ``now``) since a reader read version
    ``read`` = (table id, version): None for nothing, :class:`Appended` when every commit since was a
    blind append kept in the change feed, else why its rows cannot be followed (a sentence's tail)."""
    table_id, version = read
    if table_id != now.table_id:
        return "was deleted and built again"
    if version == now.version:
        return None
    if version > now.version:
        return f"went back from version {version} to {now.version}"
    if not now.change_feed:
        return f"keeps no change feed ({CHANGE_FEED} is off)"
    try:
        commits = open_delta(path).history(now.version - version)
    except (DeltaError, OSError) as exc:
        return f"has a log delta-rs cannot read ({exc})"
    found = {int(c.get("version", -1)): c for c in commits}
    rows: int | None = 0
    for v in range(version + 1, now.version + 1):
        commit = found.get(v)
        if commit is None:
            return f"no longer keeps the log of version {v}"
        if commit.get("operation") not in APPENDS or commit.get("isBlindAppend") is not True:
            return f"was rewritten at version {v} ({commit.get('operation', 'an unknown operation')})"
        added = (commit.get("operationMetrics") or {}).get("numOutputRows")
        rows = rows + int(added) if rows is not None and added is not None else None
    return Appended(version, now.version, rows)


def read_appended(spark: SparkSession, path: Loc, appended: Appended) -> DataFrame:
    """The rows appended after ``appended.after`` up to ``appended.upto``, through Delta's change feed
    (deletion vectors and column mapping applied by Delta), without the feed's own columns."""
    from pyspark.sql import functions as F

    feed = (spark.read.format(DELTA).option("readChangeFeed", "true")
            .option("startingVersion", appended.after + 1).option("endingVersion", appended.upto).load(str(path)))
    return feed.where(F.col("_change_type") == "insert").drop(*_CDF_COLUMNS)


def keep_change_feed(spark: SparkSession, path: Loc, on: bool = True) -> None:
    """Turn the change feed of an existing table on (a table created without one, by an older
    dagster-streamt or an engine without this package's session defaults: its next appends can then be
    followed) or off (a keyed table: its ``MERGE`` commits are never followed, and Delta's ``MERGE`` with a
    change feed cannot name a column with a backtick)."""
    if not is_delta_table(path):
        return
    try:
        now = open_delta(path).metadata().configuration.get(CHANGE_FEED, "false").lower() == "true"
    except (DeltaError, OSError):
        return  # Spark's own write reports a table it cannot read
    if now != on:
        spark.sql(f"ALTER TABLE {delta_path(path)} SET TBLPROPERTIES ('{CHANGE_FEED}' = '{str(on).lower()}')")


def file_modification_times(path: Loc) -> dict[str, int]:
    """When each active data file was written (epoch ms, as the log records it), by path relative to the
    table: what a Delta stream's micro-batch row came from, since Delta's stream has no ``_metadata``."""
    try:
        actions = open_delta(path).get_add_actions(flatten=True)
    except (DeltaError, OSError):  # no readable table (vacuumed, mid-write): the caller falls back to its own clock
        return {}
    paths, times = actions.column("path").to_pylist(), actions.column("modification_time").to_pylist()
    return {str(p): int(t) for p, t in zip(paths, times, strict=True) if t is not None}


def write(df: DataFrame, path: Loc, mode: str, record: RefreshRecord | None,
          partition_by: list[str] | None = None, change_feed: bool = True) -> None:
    """``df`` as one commit to the table at ``path``: ``overwrite`` (its schema replaces the old one) or
    ``append``; ``record`` goes in the same commit. ``change_feed``: whether the table keeps one
    (:func:`keep_change_feed`)."""
    keep_change_feed(df.sparkSession, path, change_feed)
    writer = df.write.format(DELTA).mode(mode).option(CHANGE_FEED, str(change_feed).lower())  # a new table's
    if mode == "overwrite":
        writer = writer.option("overwriteSchema", "true")
    if record is not None:
        writer = writer.option("userMetadata", record_json(record))
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(str(path))

