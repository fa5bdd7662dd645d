"""The schema a source is read with when its columns carry no types (most streamt projects: the
types live in a schema registry).

Typed columns are the schema. Otherwise the schema is inferred once from the data (Spark's JSON/CSV
inference over the files, or a sample of a Kafka topic's JSON values), with any declared types
laid over it, and recorded in ``target/schemas/<source>.json``: later runs, batch or stream, read
with the recorded schema, so a stream keeps a stable schema as new files arrive.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from ...core.files import atomic_write
from ...spec.models import Source
from ...spec.project import Project
from ...sql.identifiers import quote
from ..errors import ModelRunError

CORRUPT = "_corrupt_record"
LOCATOR = "_source_locator"  # file path (or topic/partition/offset) of each row, for quarantine
INFERRED_FORMATS = ("json", "csv", "kafka")
SAMPLE = 1000  # Kafka messages sampled to infer a topic's JSON schema


def schema_file(project: Project, source: Source) -> Path:
    return project.root / "target" / "schemas" / f"{source.name}.json"


def declared_ddl(source: Source) -> str | None:
    """The declared columns as DDL when every one of them has a type (then they are the schema)."""
    if not source.columns or any(c.type is None for c in source.columns):
        return None
    return ", ".join(f"{quote(c.name)} {c.type}" for c in source.columns)


def _overlay(inferred: StructType, source: Source) -> str:
    """DDL of the inferred schema with declared types laid over it (declared columns missing from the
    data are added, so the SQL can still name them)."""
    declared = {c.name.lower(): c for c in source.columns}
    parts = []
    for f in inferred.fields:
        if f.name == CORRUPT:
            continue
        col = declared.pop(f.name.lower(), None)
        parts.append(f"{quote(f.name)} {col.type if col is not None and col.type else f.dataType.simpleString()}")
    parts += [f"{quote(c.name)} {c.type or 'string'}" for c in declared.values()]
    return ", ".join(parts)


def _record(path: Path, schema: StructType) -> None:
    atomic_write(path, json.dumps({"schema": json.loads(schema.json())}, indent=2, sort_keys=True) + "\n")


def recorded(project: Project, source: Source) -> StructType | None:
    try:
        doc = json.loads(schema_file(project, source).read_text(encoding="utf-8"))
        return StructType.fromJson(doc["schema"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _sample_kafka(spark: SparkSession, options: dict[str, str], where: str) -> StructType:
    rows = (spark.read.format("kafka").options(**{**options, "startingOffsets": "earliest",
                                                  "endingOffsets": "latest"}).load()
            .selectExpr("CAST(value AS STRING) AS v").limit(SAMPLE).collect())
    values = [r["v"] for r in rows if r["v"]]
    if not values:
        raise ModelRunError(f"{where}: the topic is empty, so its JSON schema cannot be inferred; produce data "
                            "first or declare typed `columns:`")
    with tempfile.TemporaryDirectory(prefix="streamt-sample-") as tmp:
        (Path(tmp) / "sample.json").write_text("\n".join(values) + "\n", encoding="utf-8")
        return spark.read.json(tmp).schema


def resolve(spark: SparkSession, project: Project, source: Source, fmt: str, location: str | None,
            options: dict[str, Any], *, streaming: bool) -> str | None:
    """The schema (DDL) to read ``source`` with, or None to let Spark decide: formats that carry one,
    and batch reads before any stream recorded a schema (Spark infers it from all the data)."""
    if fmt not in INFERRED_FORMATS or declared_ddl(source) is not None:
        return None
    known = recorded(project, source)
    if known is not None:
        return _overlay(known, source)
    if not streaming and fmt != "kafka":
        return None
    where = f"source {source.name}"
    if fmt == "kafka":
        inferred = _sample_kafka(spark, options, where)
    else:
        assert location is not None
        if not any(p.is_file() and not p.name.startswith((".", "_")) for p in Path(location).rglob("*")):
            raise ModelRunError(f"{where}: {location} holds no data yet and the source declares no column types, "
                                "so there is no schema to read it with; drop data files there first or declare "
                                "`columns:` with a type each")
        inferred = spark.read.format(fmt).options(**options).load(location).schema
    if all(f.name == CORRUPT for f in inferred.fields):  # not JSON (e.g. Avro): read the raw key and value
        return None
    _record(schema_file(project, source), inferred)
    return _overlay(inferred, source)
