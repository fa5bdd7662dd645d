"""A Kafka record as SQL sees it: its value parsed by the source's value format, and the record's
metadata (key, partition, offset, timestamp, headers) as columns whose names cannot clash with a payload's.

Value formats, chosen by the source's ``options: {value.format: ...}`` (Flink's Kafka connector spelling),
else by ``schema.format``:

- ``json`` (the default): parsed with the declared (or inferred) columns, bad JSON quarantined.
- ``avro``: parsed with spark-avro's ``from_avro`` and the source's inline ``schema.definition`` (the
  writer's schema: nothing is fetched from a registry), PERMISSIVE: a record that does not decode is
  quarantined (its value in base64) with its topic/partition/offset, never dropped. With
  ``schema.format: avro`` and no ``value.format``, a value may be plain Avro or in Confluent's wire format
  (magic byte 0, a 4-byte schema id, then the Avro body): a value whose first byte is 0 and that is at
  least 5 bytes long is decoded without those 5 bytes, and decoded whole when that fails (a plain record
  can start with byte 0: a first field of 0, "" or null). ``value.format: avro`` reads every value as plain
  Avro, ``avro-confluent`` every value as framed.
- ``raw`` (or ``string``): the value as one string column ``value`` (UTF-8), nothing to quarantine.

Metadata columns, read only when the SQL of a model reading the source, the source's ``columns`` or its
``event_time`` names them
(``_kafka_headers`` sets ``includeHeaders``, which costs a little per record): ``_kafka_key`` (string),
``_kafka_topic``, ``_kafka_partition`` (int), ``_kafka_offset`` (bigint), ``_kafka_timestamp`` (timestamp:
the record's Kafka timestamp, usable as ``event_time.column``), ``_kafka_timestamp_type`` (int: 0 create
time, 1 log append time) and ``_kafka_headers`` (array of ``struct<key: string, value: binary>``).
They are Flink's ``METADATA FROM 'key' | 'topic' | 'partition' | 'offset' | 'timestamp' | 'timestamp-type'
| 'headers'``; streamt declares none.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...spec.models import Source
from ...spec.project import Project
from ..errors import ModelRunError
from .source_schema import CORRUPT, LOCATOR

VALUE_FORMAT = "value.format"
# column name -> its expression over the rows of Spark's Kafka source
METADATA = {"_kafka_key": "CAST(key AS STRING)", "_kafka_topic": "topic", "_kafka_partition": "partition",
            "_kafka_offset": "offset", "_kafka_timestamp": "timestamp", "_kafka_timestamp_type": "timestampType",
            "_kafka_headers": "headers"}
_FORMATS = {"json": "json", "avro": "avro", "avro-confluent": "avro-confluent", "raw": "raw", "string": "raw"}
_NAMES = re.compile(r"\b_kafka_[a-z_]+\b", re.IGNORECASE)


def is_metadata(name: str) -> bool:
    return name.lower() in METADATA


def value_format(source: Source) -> str:
    """json, raw, avro (plain), avro-confluent (framed) or avro-auto (either, by the magic byte)."""
    given = source.options.get(VALUE_FORMAT)
    if given is not None:
        fmt = _FORMATS.get(given.strip().lower())
        if fmt is None:
            raise ModelRunError(f"source {source.name}: options.{VALUE_FORMAT} {given!r} is not one of "
                                f"{', '.join(_FORMATS)}")
        return fmt
    schema = source.schema_
    return "avro-auto" if schema is not None and schema.format == "avro" else "json"


def metadata_used(project: Project, source: Source) -> tuple[str, ...]:
    """The metadata columns named by the SQL of a model reading the source, the source's columns or its
    event time, in a fixed order. (Declared as columns, a ``SELECT *`` passes them on.)"""
    reads = re.compile(r"""\bsource\(\s*['"]""" + re.escape(source.name) + r"""['"]\s*\)""")
    texts = [sql for m in project.models.values() if (sql := m.sql_template) and reads.search(sql)]
    texts += [c.name for c in source.columns]
    if source.event_time is not None:
        texts.append(source.event_time.column)
    if source.freshness is not None and source.freshness.column:
        texts.append(source.freshness.column)
    named = {n.lower() for text in texts for n in _NAMES.findall(text)}
    return tuple(n for n in METADATA if n in named)


def avro_schema(source: Source) -> str:
    """The inline Avro definition as the JSON text ``from_avro`` takes (it may be written as YAML)."""
    definition = source.schema_.definition if source.schema_ is not None else None
    if definition is None:
        raise ModelRunError(f"source {source.name}: Avro values need the writer's schema as `schema.definition` "
                            "(an Avro record); it is not fetched from a schema registry")
    doc: Any = definition
    if isinstance(definition, str):
        try:
            doc = json.loads(definition)
        except json.JSONDecodeError:
            doc = yaml.safe_load(definition)
    return json.dumps(doc)


OK = "__streamt_avro_ok"  # a field only the reader schema has (default true): null when a record did not decode


def _reader_schema(source: Source, writer: str) -> str:
    """The writer's record with :data:`OK` added: ``from_avro`` in PERMISSIVE mode gives a failed record as a
    struct of nulls, which a record of nullable fields can also be; the added field tells them apart."""
    doc = json.loads(writer)
    if not isinstance(doc, dict) or doc.get("type") != "record" or not isinstance(doc.get("fields"), list):
        raise ModelRunError(f"source {source.name}: an Avro value's `schema.definition` must be a record "
                            "(type: record, fields: [...])")
    return json.dumps({**doc, "fields": [*doc["fields"], {"name": OK, "type": "boolean", "default": True}]})


def _from_avro(value: SparkColumn, writer: str, reader: str) -> SparkColumn:
    from pyspark.sql.avro.functions import from_avro

    return from_avro(value, writer, {"mode": "PERMISSIVE", "avroSchema": reader})


def _avro_decoded(source: Source, df: DataFrame, fmt: str) -> DataFrame:
    """``df`` with column ``v``: the decoded value, whose :data:`OK` field is null when it did not decode."""
    writer = avro_schema(source)
    reader = _reader_schema(source, writer)
    value = F.col("value")
    body = F.expr("substring(value, 6)")  # without the magic byte and the 4-byte schema id
    if fmt == "avro":
        return df.select(_from_avro(value, writer, reader).alias("v"), "*")
    if fmt == "avro-confluent":
        return df.select(_from_avro(body, writer, reader).alias("v"), "*")
    framed = F.expr("substring(value, 1, 1) = X'00' AND length(value) >= 5")
    tried = df.select(F.when(framed, _from_avro(body, writer, reader)).alias("_framed"), "*")
    ok = F.col(f"_framed.{OK}").isNotNull()  # else decode the whole value (a plain record may start with 0)
    return tried.select(F.when(ok, F.col("_framed")).otherwise(_from_avro(value, writer, reader)).alias("v"),
                        *[c for c in df.columns])


def _locator() -> SparkColumn:
    return F.concat_ws("/", "topic", F.col("partition").cast("string"), F.col("offset").cast("string"))


def parse(source: Source, df: DataFrame, ddl: str | None, metadata: tuple[str, ...]
          ) -> tuple[DataFrame, bool, tuple[str, ...]]:
    """Kafka's rows (binary key and value) as (rows, permissive, value columns). A permissive read keeps the
    corrupt-record and locator columns; metadata columns follow the value's columns."""
    meta = [F.expr(METADATA[n]).alias(n) for n in metadata]
    fmt = value_format(source)
    if fmt == "raw":
        out = df.select(F.col("value").cast("string").alias("value"), *meta)
        return out, False, ("value",)
    if fmt.startswith("avro"):
        parsed = _avro_decoded(source, df, fmt)
        bad = F.when(F.col(f"v.{OK}").isNull() & F.col("value").isNotNull(), F.base64(F.col("value")))
        out = parsed.select("v.*", *meta, bad.alias(CORRUPT), _locator().alias(LOCATOR)).drop(OK)
        values = tuple(c for c in out.columns if c not in (CORRUPT, LOCATOR, *metadata))
        return out, True, values
    if not ddl:  # nothing declared and nothing inferred: the raw Kafka columns pass through
        return df, False, tuple(df.columns)
    opts = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    ddl_with_corrupt = ddl if CORRUPT in ddl else f"{ddl}, `{CORRUPT}` string"
    out = df.select(F.from_json(F.col("value").cast("string"), ddl_with_corrupt, opts).alias("v"),
                    *meta, _locator().alias(LOCATOR)).select("v.*", *metadata, LOCATOR)
    return out, True, tuple(c for c in out.columns if c not in (CORRUPT, LOCATOR, *metadata))
