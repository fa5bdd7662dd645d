"""Read a declared source, batch or as a stream, by its format.

json and csv are read PERMISSIVE with a ``_corrupt_record`` column and the file each row came from,
so malformed records can be quarantined instead of silently dropped (see :mod:`.quarantine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, DataFrameReader, SparkSession
from pyspark.sql import functions as F

from ...core.object_stores import is_object_uri
from ...source_files import source_location
from ...spec.kafka import kafka_client_options
from ...spec.models import FILE_FORMATS, Source
from ...spec.project import Project
from ...spec.source import STREAMABLE_FORMATS
from ...spec.topics import topic_folder
from ...sql.identifiers import quote
from ..conditions import conditions
from ..errors import ModelRunError, missing_format, missing_format_hint
from .kafka_values import VALUE_FORMAT, is_metadata, metadata_used, parse, value_format
from .source_schema import CORRUPT, LOCATOR, declared_ddl, resolve

__all__ = ["CORRUPT", "LOCATOR", "SourceRead", "can_stream", "is_corrupt", "read_source", "valid_rows"]
PERMISSIVE = ("json", "csv")
BATCH_ONLY = ("jdbc",)


@dataclass(frozen=True)
class SourceRead:
    """A source as read: ``df`` still carries the corrupt-record and locator columns when
    ``permissive`` is set; :func:`valid_rows` removes them."""

    source: Source
    df: DataFrame
    permissive: bool
    data_columns: tuple[str, ...]
    files: tuple[str, ...] = ()  # the files it was pinned to (empty: whatever its location holds)


def can_stream(source: Source) -> bool:
    return source.resolved_format in STREAMABLE_FORMATS


def _file_path(project: Project, source: Source, *, streaming: bool) -> str:
    """The location Spark reads: a local path made absolute, or an object store URI (checked there with the
    project's ``fs.*`` settings); another filesystem's URI (``hdfs://``) as given, for Spark to check."""
    assert source.path is not None
    if "://" in source.path and not is_object_uri(source.path):
        return source.path
    path = source_location(project, source)
    if not path.exists():
        raise ModelRunError(f"source {source.name}: path {path} does not exist (source paths are relative "
                            f"to the project folder {project.root})")
    if streaming and path.is_file():
        raise ModelRunError(f"source {source.name}: a stream reads a folder (each new file is new data), but "
                            f"{path} is a file; point `path:` at its folder")
    return str(path)


_STARTS = ("startingOffsets", "startingOffsetsByTimestamp", "startingTimestamp")


def _kafka_options(project: Project, source: Source, metadata: tuple[str, ...] = ()) -> dict[str, str]:
    """Client settings, the topic, and ``startingOffsets=earliest`` unless the source's ``options`` say
    where to start: Spark's stream would begin at the latest offset and skip the records a topic already
    holds, while a first run should process them (as local mode reads every file); later runs continue
    from the checkpoint's offsets, and a batch read reads earliest..latest. Records are read
    ``read_committed`` (Flink's default) unless the options say otherwise."""
    kafka = project.runtime.kafka
    opts = kafka_client_options(kafka, project.root) if kafka is not None else {}
    if source.topic:
        opts["subscribe"] = source.topic
    if not any(k in source.options for k in _STARTS):
        opts["startingOffsets"] = "earliest"
    # a transactional producer's aborted records (our own topic publication after a crash) are not data
    opts.setdefault("kafka.isolation.level", "read_committed")
    if "_kafka_headers" in metadata:  # record headers cost a little per record: only when SQL reads them
        opts["includeHeaders"] = "true"
    return opts


def _kafka_only(option: str) -> bool:
    """Options that only mean something to a broker (offsets, consumer settings), not to a folder."""
    return option.startswith("kafka.") or option in ("subscribe", "subscribePattern", "assign", "startingOffsets",
                                                       "endingOffsets", "failOnDataLoss", "maxOffsetsPerTrigger",
                                                       "minOffsetsPerTrigger", "includeHeaders", "groupIdPrefix")


def read_source(spark: SparkSession, project: Project, source: Source, *, streaming: bool,
                files: Sequence[str] | None = None, schema: str | None = None) -> SourceRead:
    """Read ``source``; raise :class:`ModelRunError` naming the source and the fix on bad config.
    ``files``: read only these files of a file source (same schema and options). ``schema``: the data
    columns (DDL) of a source that declares none, as another read of it found them."""
    fmt = source.resolved_format
    if streaming and fmt in BATCH_ONLY:
        raise ModelRunError(f"source {source.name}: {fmt} sources cannot be streamed; read it from a table model "
                            "(a stream model joins it as a static table)")
    if not streaming and fmt == "rate":
        raise ModelRunError(f"source {source.name}: a rate source only exists as a stream; read it from a "
                            "`materialized: stream` model")
    folder = topic_folder(project, source.topic) if fmt == "kafka" and source.topic else None
    if folder is not None:  # local mode: the topic is a folder of JSON-lines files
        fmt = "json"
        folder.mkdir(parents=True, exist_ok=True)
    reader = spark.readStream if streaming else spark.read
    options = {k: v for k, v in source.options.items()
               if k != VALUE_FORMAT and (folder is None or not _kafka_only(k))}
    metadata = metadata_used(project, source) if fmt == "kafka" else ()
    if fmt == "kafka":  # the value's schema: the declared columns but Kafka's metadata (see kafka_values)
        source = source.model_copy(update={"columns": [c for c in source.columns if not is_metadata(c.name)]})
    permissive = fmt in PERMISSIVE and options.get("mode", "PERMISSIVE").upper() == "PERMISSIVE"
    if fmt == "csv":
        options.setdefault("header", "true")
    try:
        location = str(folder) if folder is not None else \
            _file_path(project, source, streaming=streaming) if fmt in FILE_FORMATS else None
        read_options = {**_kafka_options(project, source, metadata), **options} if fmt == "kafka" else options
        json_values = fmt != "kafka" or value_format(source) == "json"
        ddl = declared_ddl(source) or schema or (resolve(spark, project, source, fmt, location, read_options,
                                               streaming=streaming) if json_values else None)
        if permissive:
            options.update(mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT)
            if ddl:
                ddl += f", `{CORRUPT}` string"
        if fmt == "kafka":
            raw = reader.format("kafka").options(**read_options).load()
            df, parsed, values = parse(source, raw, ddl, metadata)
            return SourceRead(source, df, parsed, values)
        if fmt == "table":
            assert source.table is not None
            df = reader.options(**options).table(source.table)
        else:
            r = reader.format(fmt).options(**options)
            if ddl and fmt not in ("rate", "text"):
                r = r.schema(ddl)
            if files and not streaming:  # a batch reader takes a list of paths (partition folders
                if location and Path(location).is_dir() and not any(k.lower() == "basepath" for k in options):
                    r = r.option("basePath", location)  # are found as when the folder is read)
                df = cast(DataFrameReader, r).load(list(files))
            else:
                df = r.load() if fmt in ("rate", "jdbc") else r.load(location)
    except ModelRunError:
        raise
    except Exception as exc:
        if missing_format(exc):
            raise ModelRunError(f"source {source.name}: {missing_format_hint(fmt)}") from exc
        if "UNABLE_TO_INFER_SCHEMA" in conditions(exc):
            raise ModelRunError(f"source {source.name}: Spark cannot infer a schema from {source.path} (is the "
                                "folder empty?); declare `columns:` with a name and type each") from exc
        raise
    data_cols = tuple(c for c in df.columns if c != CORRUPT)
    pinned = tuple(files) if files and not streaming else ()
    if permissive and CORRUPT in df.columns:
        df = df.withColumn(LOCATOR, F.col("_metadata.file_path"))
        return SourceRead(source, df, True, data_cols, pinned)
    return SourceRead(source, df, False, data_cols, pinned)


def valid_rows(read: SourceRead) -> DataFrame:
    """Rows that parsed, without the bookkeeping columns.

    The always-true ``hash(all columns) >= min int`` keeps every declared column in the scan: Spark
    refuses a query needing only ``_corrupt_record`` (``SELECT count(*)``), and a pruned parse would
    let a row with a bad value in an unused column through while quarantine reports it.
    """
    if not read.permissive:
        return read.df
    condition = F.col(CORRUPT).isNull()
    if read.data_columns:
        condition &= F.hash(*[F.col(quote(c)) for c in read.data_columns]) >= F.lit(-(2**31))
    return read.df.where(condition).drop(CORRUPT, LOCATOR)


def is_corrupt() -> SparkColumn:
    return F.col(CORRUPT).isNotNull()

