"""What each streamt key does on Spark: the one table behind ``streamt validate``'s compatibility
notes and the README's "Coming from streamt" table.

A key is either *mapped* (it has a Spark or Dagster meaning) or a *note*: it is accepted and kept so
a streamt project loads unchanged, and validation says once per kind of key why it does nothing
here. A missing ``${VAR}`` inside a note key is only a note too: nothing on Spark reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, Literal

Effect = Literal["mapped", "note"]


@dataclass(frozen=True)
class KeyMeaning:
    effect: Effect
    pattern: str  # dotted key path; `[]` marks list items, `*` any map key
    text: str

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.pattern.replace("[]", ".[]").split("."))


_m = partial(KeyMeaning, "mapped")  # _m(pattern, text): a key with a Spark or Dagster meaning
_n = partial(KeyMeaning, "note")  # _n(pattern, text): kept for compatibility, no effect on Spark


_TOPICS = ("a model topic the broker lacks is created with these partitions, replication (at most the brokers "
           "there, with a warning) and configs before the model first writes it; `rules.topics` checks them")
_TASKS = "Spark parallelism comes from the data's partitions, not Connect tasks"
_TOPIC_NAME = "the Kafka topic (or local topic folder) the model also writes to"
_ROCKSDB = "`rocksdb` selects Spark's RocksDB state store for this model"
_NO_REGISTRY = "schemas are not fetched from a registry (give `definition` or typed `columns`)"
_WRITER = "the sink's writer (see the connector table)"
_NO_COMPRESSION = "views store nothing, so there is nothing to compress"
_PAUSE = "a failing blocking check already stops the models downstream of it"
_SESSION = "models run in the Spark session of `runtime.spark`"
_NO_CONNECT = "sinks are written by Spark, not by a Connect cluster"
_DLQ = "failing rows of continuous tests are kept in `<model>__violations`; there is no dead-letter topic"

STREAMT_KEYS: tuple[KeyMeaning, ...] = (
    # the root file
    _m("apiVersion", "checked: `streamt.dev/v1alpha1` (streamt's newer format), or absent"),
    _n("governance", "streamt's parser ignores this free-form block too; the policies it checks are `rules:`"),
    # runtime
    _m("runtime", "optional here: without it models run on a local Spark session, where streamt requires "
       "`runtime.kafka` (and a Flink cluster for stateful models)"),
    _m("runtime.kafka.bootstrap_servers", "`kafka.bootstrap.servers` of Spark's Kafka source and sink"),
    _m("runtime.kafka.security_protocol", "`kafka.security.protocol`"),
    _m("runtime.kafka.sasl_mechanism", "`kafka.sasl.mechanism`"),
    _m("runtime.kafka.sasl_username", "with `sasl_password`: `kafka.sasl.jaas.config` (PLAIN or SCRAM login module)"),
    _m("runtime.kafka.sasl_password", "with `sasl_username`: `kafka.sasl.jaas.config`"),
    _m("runtime.kafka.ssl_ca_location", "`kafka.ssl.truststore.location` with `kafka.ssl.truststore.type=PEM`"),
    _m("runtime.kafka.ssl_certificate_location", "`kafka.ssl.keystore.certificate.chain` (the PEM file's text)"),
    _m("runtime.kafka.ssl_key_location", "`kafka.ssl.keystore.key` (the PEM file's text)"),
    _n("runtime.kafka.bootstrap_servers_internal",
       "the brokers as seen from Flink and Connect containers; Spark uses `bootstrap_servers`"),
    _n("runtime.schema_registry",
       "source schemas come from `schema.definition`, typed `columns` or inference, not from a registry"),
    _n("runtime.flink", "there is no Flink cluster: models run in the Spark session of `runtime.spark` (stateful "
       "models need no Flink cluster either)"),
    _n("runtime.connect", "there is no Kafka Connect cluster: sinks are written by Spark (see `sink`)"),
    _n("runtime.conduktor", "there is no Conduktor Gateway: virtual topics are Spark views"),
    # defaults
    _m("defaults.tests.sample_size", "default `sample_size` of sample tests"),
    _m("defaults.topic", _TOPICS),
    _m("defaults.models.topic", _TOPICS),
    _n("defaults.models.cluster", "models run in the Spark session of `runtime.spark`, not on a named cluster"),
    _n("defaults.models.flink_cluster", "models run in the Spark session of `runtime.spark`, not on a Flink cluster"),
    _n("defaults.tests.flink_cluster", "tests run as Spark queries and Dagster asset checks, not on a Flink cluster"),
    # rules
    _m("rules.topics", "checked by `streamt validate` against each model's topic settings (GOV4xx)"),
    _m("rules.models", "checked by `streamt validate` (GOV1xx)"),
    _m("rules.sources", "checked by `streamt validate` (GOV2xx)"),
    _m("rules.security", "checked by `streamt validate` (GOV3xx); masking is traced through column lineage"),
    _m("rules.exposures", "checked by `streamt validate` (GOV5xx)"),
    _m("rules.tests", "checked by `streamt validate` (GOV6xx)"),
    # sources
    _m("sources[].topic", "read with Spark's Kafka source, or the folder `<runtime.kafka.local_dir>/<topic>`"),
    _m("sources[].schema.definition", "inline Avro or JSON Schema: the source's Spark schema"),
    _n("sources[].schema.registry", _NO_REGISTRY),
    _n("sources[].schema.subject", _NO_REGISTRY),
    _n("sources[].schema.version", _NO_REGISTRY),
    _m("sources[].schema.format", "how `definition` is read (avro or json); `avro`: Kafka values are decoded as "
       "Avro (plain or Confluent-framed); protobuf needs typed `columns`"),
    _m("sources[].columns[].type", "the column's Spark type (Flink types such as `STRING`, `TIMESTAMP(3)` are mapped)"),
    _m("sources[].columns[].proctime", "a processing-time column: the time the row is read"),
    _m("sources[].columns[].tests", "Dagster asset checks on the source, one per column test"),
    _m("sources[].event_time", "the watermark of the event-time column (`withWatermark`)"),
    _m("sources[].advanced.event_time", "the watermark delay; `allowed_lateness_ms` is added to it"),
    _m("sources[].freshness", "a freshness check and a Dagster freshness policy"),
    _n("sources[].cluster", "Spark reads the brokers of `runtime.kafka`, not a named cluster"),
    _m("sources[].contract", "Dagster metadata (the producer's version, SLA and contact)"),
    _m("sources[].ownership", "Dagster metadata (`ownership`); sources are never created or deleted here"),
    # models
    _m("models[].materialized", "`topic`/`flink` run as `stream`, `virtual_topic` as `view`; inferred when omitted, "
       "as `table` for a join of two streams without a time bound (recomputed each run) and for a model none of "
       "whose inputs can be read as a stream"),
    _m("models[].contract", "`enforced: true`: each run checks the output's columns and types, and fails the model "
       "(before its topic is published) naming the column and the contract's file:line"),
    _m("models[].ownership", "Dagster metadata (`ownership`); dagster-streamt creates a missing topic and never "
       "deletes one"),
    _n("models[].schema", "the output's Schema Registry subject settings (e.g. `compatibility`); no registry is used"),
    _m("models[].from", "the input of a sink or view without `sql:`"),
    _m("models[].key", "the Kafka message key of the model's topic, the upsert key of sinks, and a table's key: one "
       "row per key (the latest by event time), appended files upserted with Delta's `MERGE`"),
    _m("models[].access", "Dagster metadata; `rules.security.require_access_level` checks it"),
    _m("models[].group", "the Dagster asset group"),
    _m("models[].version", "part of the Dagster code version"),
    _m("models[].deprecation", "Dagster metadata, and a warning when a deprecated version's sunset date has passed"),
    _m("models[].security", "masked columns stop sensitive classifications in column lineage (GOV302)"),
    _m("models[].gateway", "a virtual topic is a Spark view"),
    _m("models[].ml_outputs", "declared output columns of `ML_PREDICT` (no Spark equivalent) for lineage"),
    _m("models[].connector", _WRITER),
    _m("models[].sink", "the sink's writer: `format`/`path`/`options`, or streamt's `connector` + `config`"),
    _m("models[].topic", _TOPICS),
    _m("models[].topic.name", _TOPIC_NAME),
    _m("models[].advanced.topic", _TOPICS),
    _m("models[].advanced.topic.name", _TOPIC_NAME),
    _m("models[].advanced.flink.parallelism", "`spark.sql.shuffle.partitions` for this model"),
    _m("models[].advanced.flink.state_backend", _ROCKSDB),
    _m("models[].advanced.flink.state.backend", _ROCKSDB),
    *(_m(f"models[].advanced.flink.{key}", "the micro-batch interval of `streamt run --continuous`")
      for key in ("checkpoint_interval_ms", "checkpoint_interval", "checkpoint.interval_ms")),
    _n("models[].advanced.flink",
       "Flink job tuning (checkpoint timeouts, state TTL, restart, resources, savepoints) has no Spark "
       "counterpart here: Spark checkpoints every micro-batch, and state is bounded by watermarks"),
    _n("models[].flink", "Flink job tuning; on Spark see `advanced.spark`"),
    _n("models[].advanced.flink_cluster", _SESSION),
    _n("models[].flink_cluster", _SESSION),
    _n("models[].advanced.connect_cluster", _NO_CONNECT),
    _n("models[].connect_cluster", _NO_CONNECT),
    _m("models[].advanced.event_time", "the watermark of the model's event-time column"),
    _m("models[].advanced.gateway", "a virtual topic is a Spark view"),
    _n("models[].advanced.gateway.virtual_topic.compression", _NO_COMPRESSION),
    _n("models[].gateway.virtual_topic.compression", _NO_COMPRESSION),
    _m("models[].advanced.virtual_topic", "`true` makes the model a Spark view"),
    _m("models[].advanced.security", "as `security`: masked columns stop sensitive classifications in lineage"),
    _m("models[].advanced.access", "as `access`: Dagster metadata"),
    _m("models[].advanced.connector", _WRITER),
    _m("models[].advanced.sink", _WRITER),
    *(_n(f"models[].{block}.tasks_max", _TASKS) for block in ("connector", "advanced.connector", "sink")),
    # tests
    _m("tests[].model", "the model (or source) the asset check runs on"),
    _m("tests[].type", "`schema` checks declared columns before any run; `sample` and `continuous` run on Spark"),
    _m("tests[].on_failure", "`severity` and `block_deploy` make the check blocking; alerts are sent when it fails"),
    _m("tests[].on_failure[].alert", "Slack/webhook `webhook`/`url`: a JSON POST; PagerDuty `routing_key`: an Events "
                                     "API v2 trigger"),
    _n("tests[].on_failure.actions[].pause", _PAUSE),
    _n("tests[].on_failure[].pause", _PAUSE),
    _n("tests[].on_failure.actions[].dlq", _DLQ),
    _n("tests[].on_failure[].dlq", _DLQ),
    _m("tests[].sample_size", "how many rows a sample test reads"),
    _n("tests[].timeout", "sample tests read stored data and never wait for messages"),
    _n("tests[].flink_cluster", "tests run as Spark queries and Dagster asset checks"),
    # exposures
    _m("exposures[].consumes", "Dagster asset dependencies: the exposure is downstream of what it reads"),
    _m("exposures[].produces", "Dagster asset dependencies: the producer is upstream of its sources"),
    _m("exposures[].sla", "Dagster metadata; `rules.exposures` checks it"),
    _m("exposures[].contacts", "Dagster metadata; `rules.exposures.require_contacts` checks it"),
    *(_m(f"exposures[].{key}", "Dagster metadata") for key in (
        "consumer_group", "contracts", "access", "freshness", "schedule", "data_requirements", "access_justification")),
    # environments
    _n("environment", "environment files are merged over the project; the name, description and "
                      "`protected` flag are kept for streamt's `apply`, which dagster-streamt does not have"),
    _n("safety", "streamt's deployment guards; dagster-streamt runs models, it does not deploy infrastructure"),
)

NOTE_KEYS: tuple[KeyMeaning, ...] = tuple(k for k in STREAMT_KEYS if k.effect == "note")


def _matches(parts: tuple[str, ...], path: tuple[str, ...]) -> bool:
    return len(path) >= len(parts) and all(p in ("*", q) for p, q in zip(parts, path, strict=False))


def note_for(path: tuple[str | int, ...]) -> KeyMeaning | None:
    """The most specific table entry covering ``path``, when that entry is a note.

    A mapped entry below a note (``advanced.flink.parallelism`` under ``advanced.flink``) wins.
    """
    return _note_for_parts(tuple("[]" if isinstance(p, int) else str(p) for p in path))  # list indexes: `[]`


@lru_cache(maxsize=8192)
def _note_for_parts(kp: tuple[str, ...]) -> KeyMeaning | None:
    """Cached by pattern path: a project repeats the same few hundred paths (``models.[].columns.[].name``)
    for every entity, and the scan over the table is the cost."""
    best = max((k for k in STREAMT_KEYS if _matches(k.parts, kp)), key=lambda k: len(k.parts), default=None)
    return best if best is not None and best.effect == "note" else None


def walk_keys(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every key path present in a YAML value (mappings and lists)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*path, k)
            yield from walk_keys(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk_keys(v, (*path, i))


def markdown_table() -> str:
    """The README table: every streamt key and what it does on Spark."""
    rows = ["| streamt key | on Spark |", "|---|---|"]
    for k in STREAMT_KEYS:
        meaning = k.text if k.effect == "mapped" else f"kept for compatibility, no effect: {k.text}"
        rows.append(f"| `{k.pattern}` | {meaning} |")
    return "\n".join(rows)
