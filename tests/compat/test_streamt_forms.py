"""Each spelling streamt uses is accepted and means one thing here; typos stay errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.api import load
from dagster_streamt.checks.assertions import parse_assertions
from dagster_streamt.compile.render import render_sql
from dagster_streamt.guide import expand
from dagster_streamt.spec.compat import STREAMT_KEYS, markdown_table, note_for
from dagster_streamt.spec.connectors import sink_target
from dagster_streamt.spec.envvars import EnvResolver
from dagster_streamt.spec.kafka import kafka_client_options
from dagster_streamt.spec.loader import load_project
from dagster_streamt.spec.models import KafkaRuntime, SinkConfig
from dagster_streamt.spec.models import Test as SpecTest
from dagster_streamt.spec.schema_types import SchemaError, definition_columns, spark_type

from ..helpers import write_project

ROOT = Path(__file__).parents[2]
SRC = """\
sources:
  - name: payments_raw
    topic: payments.raw.v1
    columns:
      - {name: payment_id, type: STRING}
      - {name: amount, type: "DECIMAL(10, 2)"}
      - {name: ts, type: TIMESTAMP(3)}
    event_time: {column: ts}
"""


def diags_of(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int]]:
    write_project(tmp_path, files)
    _, diags = load_project(tmp_path, environ={})
    return [(d.code, d.message, d.line) for d in diags.items]


def test_typos_are_errors_with_did_you_mean(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": """\
        project: {name: t}
        runtime:
          flnk: {default: x}
        """, "models/m.yml": """\
        models:
          - name: m
            sql: SELECT 1 AS a FROM {{ source("s") }}
            advanced:
              flink: {paralelism: 4, checkpoint_intervl: 1000}
              topc: {name: x}
        """, "sources/s.yml": "sources:\n  - {name: s, topic: t}\n"})
    _, diags = load_project(tmp_path, environ={})
    errors = {(d.message, d.hint) for d in diags.errors}
    assert any("'flnk'" in m and 'did you mean "flink"' in h for m, h in errors)
    assert any("advanced.flink.paralelism" in m and 'did you mean "parallelism"' in h for m, h in errors)
    assert any("checkpoint_intervl" in m and 'did you mean "checkpoint_interval"' in h for m, h in errors)
    assert any("advanced.topc" in m and 'did you mean "topic"' in h for m, h in errors)


def test_one_note_per_kind_of_key_with_no_effect(tmp_path: Path) -> None:
    found = diags_of(tmp_path, {"stream_project.yml": """\
        project: {name: t}
        runtime:
          flink:
            default: a
            clusters: {a: {type: rest, rest_url: "${FLINK_URL}"}, b: {type: confluent, api_secret: s}}
          connect: {clusters: {c: {rest_url: http://c}}}
        """, "sources/s.yml": SRC})
    notes = [(c, m) for c, m, _ in found if c in ("STR042", "STR030")]
    assert [c for c, _ in notes].count("STR042") == 2  # runtime.flink once (two clusters), runtime.connect
    assert any(c == "STR030" and "FLINK_URL" in m and "no effect on Spark" in m for c, m in notes)
    assert not [d for d in found if d[0].startswith("STR01")]


def test_every_note_key_and_the_guide_table() -> None:
    assert note_for(("runtime", "flink", "clusters", "x", "rest_url")).pattern == "runtime.flink"
    assert note_for(("models", 3, "advanced", "flink", "parallelism")) is None  # mapped
    assert note_for(("models", 3, "advanced", "flink", "state_ttl_ms")).pattern == "models[].advanced.flink"
    assert note_for(("models", 0, "advanced", "topic", "name")) is None
    assert len({k.pattern for k in STREAMT_KEYS}) == len(STREAMT_KEYS)
    page = (ROOT / "docs" / "coming-from-streamt.md").read_text()  # the guide's table is generated at build time
    assert "<!-- generated:streamt-keys -->" in page and markdown_table() in expand(page)


def test_names_with_hyphens_and_dots_and_their_clashes(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": "project: {name: payments-pipeline}\n", "sources/s.yml": """\
        sources:
          - {name: payments.raw, topic: payments.raw.v1}
          - {name: payments_raw, topic: other}
        """, "models/m.yml": """\
        models:
          - name: payments-clean
            sql: SELECT * FROM {{ source("payments.raw") }}
        """})
    loaded = load(tmp_path, use_cache=False)
    assert loaded.project.ident == "payments_pipeline"
    clash = next(d for d in loaded.errors if d.code == "STR022")
    assert "payments.raw" in clash.message and "payments_raw" in clash.message and "Spark view" in clash.message


def test_tests_as_streamt_writes_them(tmp_path: Path) -> None:
    source = SRC + "    freshness: {warn_after: 30s, error_after: 2m}\n"
    loaded = load(write_project(tmp_path, {"sources/s.yml": source, "models/m.yml": """\
        models:
          - name: clean
            sql: SELECT payment_id, amount, ts FROM {{ source("payments_raw") }}
            columns:
              - name: payment_id
                tests: [not_null, unique]
              - name: amount
                tests: [{range: {min: 0}}]
        """, "tests/t.yml": """\
        tests:
          - name: on_source
            model: payments_raw
            type: sample
            assertions: [{accepted_types: {payment_id: string, amount: number}}]
          - name: monitor
            model: clean
            type: continuous
            assertions:
              - max_lag: {seconds: 30}
              - throughput: {min_per_minute: 60, max_per_second: 100}
            on_failure:
              - alert: {channel: slack, webhook: "http://hook"}
              - block_deploy: true
          - name: checks
            model: clean
            description: custom
            timeout: 30s
            assertions:
              - custom_sql: {sql: "SELECT COUNT(*) FROM {{ model }} WHERE amount IS NULL", max_failures: 10}
              - positive: {column: amount, allow_zero: true}
            on_failure: {severity: warning, actions: [{dlq: {topic: dlq}}]}
        """}), use_cache=False)
    assert not loaded.errors, [d.format() for d in loaded.errors]
    tests = loaded.project.tests
    assert tests["on_source"].source == "payments_raw" and tests["on_source"].model is None
    assert tests["clean__payment_id"].assertions == [{"not_null": {"columns": ["payment_id"]}},
                                                     {"unique": {"columns": ["payment_id"]}}]
    assert tests["clean__amount"].assertions == [{"range": {"min": 0, "column": "amount"}}]
    assert tests["monitor"].declared_severity == "error" and tests["monitor"].alerts[0].webhook == "http://hook"
    assert tests["checks"].declared_severity == "warn"
    parsed = {a.written: a.params for a in parse_assertions(tests["monitor"])[0]}
    assert parsed["max_lag"].max_seconds == 30 and parsed["max_lag"].column is None
    assert parsed["throughput"].low == 1.0 and parsed["throughput"].high == 100
    assert loaded.project.event_columns["clean"] == "ts"  # what max_lag measures without a column
    checks = parse_assertions(tests["checks"])[0]
    assert [(a.name, a.written) for a in checks] == [("custom_sql", "custom_sql"), ("range", "positive")]
    assert parse_assertions(tests["on_source"])[0][0].params.types == {"payment_id": "string", "amount": "number"}


def test_exposures_with_every_documented_field(tmp_path: Path) -> None:
    loaded = load(write_project(tmp_path, {"sources/s.yml": SRC, "exposures/e.yml": """\
        exposures:
          - name: checkout-service
            type: application
            role: both
            consumes: [{source: payments_raw}]
            produces: [{source: payments_raw}]
            consumer_group: checkout-cg
            sla: {availability: 99.9, latency_p99_ms: 100, max_lag_messages: 1000, throughput_per_second: 50}
            contracts: {schema: payments-value, compatibility: BACKWARD}
            access: {roles: [ops], purpose: checkout}
            contacts: [{name: Jane, email: jane@example.com, slack: "#ops"}]
        """}), use_cache=False)
    e = loaded.project.exposures["checkout-service"]
    assert e.sla is not None and e.sla.availability == "99.9" and e.sla.availability_percent == 99.9
    assert e.contacts[0].slack == "#ops"


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t WHERE ts >= '{{ partition_start }}' AND ts < '{{ partition_end }}'",
    "SELECT * FROM t WHERE ts >= {{ partition_start }} AND ts < {{ partition_end }}",
    'SELECT * FROM t WHERE ts >= "{{ partition_start }}" AND ts < "{{ partition_end }}"',
])
def test_partition_variables_quoted_or_not(sql: str) -> None:
    out = render_sql("m", sql, variables={}, resolver=EnvResolver(),
                     partition={"partition_start": "TIMESTAMP '2026-01-01 00:00:00+00:00'",
                                "partition_end": "TIMESTAMP '2026-01-02 00:00:00+00:00'"}).sql
    assert out == ("SELECT * FROM t WHERE ts >= TIMESTAMP '2026-01-01 00:00:00+00:00' AND "
                   "ts < TIMESTAMP '2026-01-02 00:00:00+00:00'")


def test_types_and_inline_schemas() -> None:
    assert [spark_type(t) for t in ("STRING", "TIMESTAMP(3)", "DECIMAL(10, 2)", "ARRAY<ROW<a INT>>",
                                    "MAP<STRING, BIGINT>", "TIMESTAMP_LTZ(3)", "BOOLEAN")] == [
        "string", "timestamp", "decimal(10,2)", "array<struct<a:int>>", "map<string,bigint>", "timestamp",
        "boolean"]
    with pytest.raises(SchemaError, match="unknown column type 'STRNG'"):
        spark_type("STRNG")
    avro = ('{"type": "record", "name": "O", "fields": [{"name": "id", "type": "string"}, '
            '{"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]}]}')
    assert definition_columns(avro, "avro") == [("id", "string"), ("ts", "timestamp")]
    json_schema = {"type": "object", "properties": {"n": {"type": "integer"}, "tags": {"type": "array",
                                                                                        "items": {"type": "string"}}}}
    assert definition_columns(json_schema, "json") == [("n", "bigint"), ("tags", "array<string>")]


def test_source_schema_from_definition_is_located(tmp_path: Path) -> None:
    found = diags_of(tmp_path, {"sources/s.yml": """\
        sources:
          - name: a
            topic: a
            schema:
              format: avro
              definition: '{"type": "record", "name": "A", "fields": [{"name": "id", "type": "long"}]}'
            columns: [{name: id, classification: internal}]
          - name: b
            topic: b
            schema: {definition: "not: [a, schema"}
            columns: [{name: x, type: STRNG}]
        """})
    errors = sorted((c, ln) for c, m, ln in found if c == "STR012")
    assert errors == [("STR012", 10), ("STR012", 11)]


def test_connectors_become_spark_writers() -> None:
    jdbc = sink_target(SinkConfig(connector="jdbc-sink", config={
        "connection.url": "jdbc:postgresql://db/a", "connection.user": "u", "table.name.format": "orders",
        "insert.mode": "upsert", "pk.fields": "order_id", "tasks.max": 4}), "m")
    assert (jdbc.format, jdbc.options, jdbc.key, jdbc.unused) == (
        "jdbc", {"url": "jdbc:postgresql://db/a", "user": "u", "dbtable": "orders"}, ("order_id",), ("tasks.max",))
    s3 = sink_target(SinkConfig(connector="s3-sink", config={
        "s3.bucket.name": "lake", "topics.dir": "streaming/orders",
        "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat", "flush.size": 1000}), "orders")
    assert (s3.format, s3.path, s3.package) == ("parquet", "s3a://lake/streaming/orders/orders",
                                                "org.apache.hadoop:hadoop-aws")
    assert sink_target(SinkConfig(connector="http-sink"), "m").error is not None
    assert sink_target(SinkConfig(format="csv", path="out"), "m").path == "out"


def test_kafka_security_becomes_client_options(tmp_path: Path) -> None:
    opts = kafka_client_options(KafkaRuntime(bootstrap_servers=["b1:9092", "b2:9092"], security_protocol="SASL_SSL",
                                             sasl_mechanism="SCRAM-SHA-512", sasl_username="u",
                                             sasl_password='p"w'), tmp_path)
    assert opts["kafka.bootstrap.servers"] == "b1:9092,b2:9092"
    assert opts["kafka.sasl.jaas.config"] == ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                                              'username="u" password="p\\"w";')
    assert opts["kafka.security.protocol"] == "SASL_SSL" and opts["kafka.sasl.mechanism"] == "SCRAM-SHA-512"


def test_a_spec_test_object_takes_both_on_failure_forms() -> None:
    listed = SpecTest(name="t", model="m", assertions=[{"not_null": {"columns": ["a"]}}],
                  on_failure=[{"alert": {"channel": "pagerduty", "routing_key": "k"}}])
    mapped = SpecTest(name="t", model="m", assertions=[{"not_null": {"columns": ["a"]}}],
                  on_failure={"severity": "warning", "actions": [{"alert": {"type": "slack", "channel": "#x"}}]})
    assert listed.alerts[0].routing_key == "k" and listed.declared_severity is None
    assert mapped.alerts[0].type == "slack" and mapped.declared_severity == "warn"
