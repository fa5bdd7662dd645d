"""How a Kafka source's value format and metadata columns are chosen (no Spark session: plain data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagster_streamt.spark.errors import ModelRunError
from dagster_streamt.spark.sources.kafka_values import (
    OK,
    _reader_schema,
    avro_schema,
    is_metadata,
    metadata_used,
    value_format,
)
from dagster_streamt.spec.loader import load_project
from dagster_streamt.spec.project import Project

from ..helpers import write_project

AVRO = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}

PROJECT = """\
project:
  name: kv
runtime:
  kafka:
    bootstrap_servers: localhost:9092
sources:
  - name: avro_src
    topic: a
    schema: {{format: avro, definition: '{avro}'}}
  - name: framed
    topic: b
    options: {{value.format: avro-confluent}}
    schema: {{definition: '{avro}'}}
  - name: text
    topic: c
    options: {{value.format: raw}}
    event_time: {{column: _kafka_timestamp}}
  - name: plain
    topic: d
    columns:
      - {{name: id, type: bigint}}
      - {{name: _kafka_partition, type: int}}
models:
  - name: m
    sql: SELECT id, _KAFKA_KEY, _kafka_offset, _kafka_headers FROM {{{{ source("plain") }}}}
"""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = write_project(tmp_path / "kv", {"stream_project.yml": PROJECT.format(avro=json.dumps(AVRO))})
    loaded, diagnostics = load_project(root)
    assert loaded is not None, diagnostics
    return loaded


def test_value_formats(project: Project) -> None:
    src = project.sources
    assert value_format(src["avro_src"]) == "avro-auto"
    assert value_format(src["framed"]) == "avro-confluent"
    assert value_format(src["text"]) == "raw"
    assert value_format(src["plain"]) == "json"
    assert json.loads(avro_schema(src["avro_src"])) == AVRO
    with pytest.raises(ModelRunError, match=r"schema\.definition"):
        avro_schema(src["plain"])
    bad = src["text"].model_copy(update={"options": {"value.format": "xml"}})
    with pytest.raises(ModelRunError, match=r"value\.format 'xml'"):
        value_format(bad)


def test_metadata_columns_are_read_when_named(project: Project) -> None:
    # the SQL of a model reading the source (case-insensitive), the source's columns, its event time
    assert metadata_used(project, project.sources["plain"]) == (
        "_kafka_key", "_kafka_partition", "_kafka_offset", "_kafka_headers")
    assert metadata_used(project, project.sources["text"]) == ("_kafka_timestamp",)
    assert metadata_used(project, project.sources["avro_src"]) == ()
    assert is_metadata("_Kafka_Offset") and not is_metadata("_kafka_other")


def test_the_avro_reader_schema_marks_decoded_records(project: Project) -> None:
    src = project.sources["avro_src"]
    reader = json.loads(_reader_schema(src, avro_schema(src)))
    assert reader["fields"] == [*AVRO["fields"], {"name": OK, "type": "boolean", "default": True}]
    with pytest.raises(ModelRunError, match="must be a record"):
        _reader_schema(src, json.dumps("string"))
