"""streamt's Kafka Connect sink connectors as Spark writers.

A streamt sink names a connector (``jdbc-sink``, ``s3-sink``, ``snowflake-sink`` ...) and its Connect
``config``; Spark writes the same data with a DataFrame writer. :func:`sink_target` is the one place
that translates, so validation can say what a sink becomes and the Spark layer writes exactly that.
Connect-only settings (converters, buffering, tasks) are listed as unused, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .model import Model, SinkConfig

# Connect settings about converters, buffering and scheduling: Spark writes whole batches instead.
_CONNECT_ONLY_PREFIXES = ("key.converter", "value.converter", "header.converter", "errors.", "transforms",
                          "buffer.", "behavior.on.", "consumer.override.", "producer.override.")
_CONNECT_ONLY = {"tasks.max", "topics", "topics.regex", "flush.size", "rotate.interval.ms",
                 "rotate.schedule.interval.ms", "partitioner.class", "path.format", "partition.duration.ms",
                 "locale", "timezone", "storage.class", "schema.compatibility", "auto.evolve", "batch.size",
                 "max.retries", "retry.backoff.ms", "key.ignore", "schema.ignore", "type.name",
                 "snowflake.topic2table.map", "connection.attempts", "connection.backoff.ms", "pk.mode",
                 "delete.enabled"}


@dataclass(frozen=True)
class SinkTarget:
    format: str  # the Spark writer's format
    path: str | None = None  # file targets
    options: dict[str, str] = field(default_factory=dict)
    key: tuple[str, ...] = ()  # the connector's upsert key (pk.fields), if any
    package: str | None = None  # the Spark package the writer needs (not bundled with pyspark)
    unused: tuple[str, ...] = ()  # connector settings with no Spark meaning
    error: str | None = None  # a connector Spark cannot write to


def _s(config: dict[str, Any], key: str) -> str | None:
    v = config.get(key)
    return None if v is None else str(v)


def _file_format(format_class: str | None, default: str = "json") -> str:
    text = (format_class or "").lower()
    for fmt in ("parquet", "avro", "json", "csv", "orc"):
        if fmt in text:
            return fmt
    return default


def _jdbc(c: dict[str, Any], model: str) -> SinkTarget:
    opts = {k: v for k, v in (("url", _s(c, "connection.url")), ("user", _s(c, "connection.user")),
                              ("password", _s(c, "connection.password"))) if v}
    table = (_s(c, "table.name.format") or model).replace("${topic}", model)
    key: tuple[str, ...] = ()
    if (_s(c, "insert.mode") or "insert").lower() in ("upsert", "update") and c.get("pk.fields"):
        key = tuple(k.strip() for k in str(c["pk.fields"]).split(",") if k.strip())
    used = {"connection.url", "connection.user", "connection.password", "table.name.format", "insert.mode",
            "pk.fields", "auto.create"}
    return SinkTarget("jdbc", None, {**opts, "dbtable": table}, key, unused=_unused(c, used))


def _object_store(scheme: str, bucket_key: str) -> Callable[[dict[str, Any], str], SinkTarget]:
    def build(c: dict[str, Any], model: str) -> SinkTarget:
        bucket = _s(c, bucket_key) or "<bucket>"
        folder = (_s(c, "topics.dir") or "topics").strip("/")
        opts = {}
        if scheme == "s3a":
            for src, dst in (("aws.access.key.id", "fs.s3a.access.key"), ("aws.secret.access.key", "fs.s3a.secret.key"),
                             ("s3.region", "fs.s3a.endpoint.region")):
                if c.get(src) is not None:
                    opts[dst] = str(c[src])
        used = {bucket_key, "topics.dir", "format.class", "aws.access.key.id", "aws.secret.access.key", "s3.region"}
        return SinkTarget(_file_format(_s(c, "format.class")), f"{scheme}://{bucket}/{folder}/{model}", opts,
                          package="org.apache.hadoop:hadoop-aws" if scheme == "s3a" else
                          "com.google.cloud.bigdataoss:gcs-connector", unused=_unused(c, used))
    return build


def _snowflake(c: dict[str, Any], model: str) -> SinkTarget:
    mapping = {"snowflake.url.name": "sfURL", "snowflake.user.name": "sfUser",
               "snowflake.private.key": "pem_private_key", "snowflake.database.name": "sfDatabase",
               "snowflake.schema.name": "sfSchema", "snowflake.role.name": "sfRole",
               "snowflake.warehouse.name": "sfWarehouse"}
    opts = {dst: str(c[src]) for src, dst in mapping.items() if c.get(src) is not None}
    opts["dbtable"] = _s(c, "snowflake.table.name") or model.upper()
    return SinkTarget("net.snowflake.spark.snowflake", None, opts, package="net.snowflake:spark-snowflake_2.13",
                      unused=_unused(c, {*mapping, "snowflake.table.name"}))


def _bigquery(c: dict[str, Any], model: str) -> SinkTarget:
    dataset = _s(c, "defaultDataset") or _s(c, "datasets") or "<dataset>"
    opts = {"table": f"{dataset}.{model}", "writeMethod": "direct"}
    if c.get("project"):
        opts["project"] = str(c["project"])
    if c.get("keyfile"):
        opts["credentialsFile"] = str(c["keyfile"])
    return SinkTarget("bigquery", None, opts, package="com.google.cloud.spark:spark-bigquery-with-dependencies_2.13",
                      unused=_unused(c, {"defaultDataset", "datasets", "project", "keyfile"}))


def _elasticsearch(c: dict[str, Any], model: str) -> SinkTarget:
    opts = {"es.nodes": _s(c, "connection.url") or "localhost:9200", "es.resource": model}
    return SinkTarget("org.elasticsearch.spark.sql", None, opts,
                      package="org.elasticsearch:elasticsearch-spark-30_2.13", unused=_unused(c, {"connection.url"}))


_CONNECTORS: dict[str, Callable[[dict[str, Any], str], SinkTarget]] = {
    "jdbc-sink": _jdbc, "io.confluent.connect.jdbc.jdbcsinkconnector": _jdbc,
    "s3-sink": _object_store("s3a", "s3.bucket.name"), "io.confluent.connect.s3.s3sinkconnector":
        _object_store("s3a", "s3.bucket.name"),
    "gcs-sink": _object_store("gs", "gcs.bucket.name"),
    "snowflake-sink": _snowflake, "com.snowflake.kafka.connector.snowflakesinkconnector": _snowflake,
    "bigquery-sink": _bigquery, "elasticsearch-sink": _elasticsearch,
}
NO_SPARK_WRITER = {"http-sink": "Spark has no HTTP writer; export to files or a table and let the service read it, "
                                "or POST rows from a Python step downstream"}


def _connector_key(sink: SinkConfig, model: str) -> tuple[str, ...]:
    build = _CONNECTORS.get((sink.connector or "").lower())
    return build(dict(sink.config), model).key if build is not None else ()


def _unused(config: dict[str, Any], used: set[str]) -> tuple[str, ...]:
    return tuple(sorted(k for k in config if k not in used
                        and (k in _CONNECT_ONLY or k.startswith(_CONNECT_ONLY_PREFIXES) or "." in k)))


LOCAL_CONNECT = "_connect"  # local mode: where Kafka Connect sinks write instead of their external system


def sink_target(sink: SinkConfig, model: str, local_dir: str | None = None) -> SinkTarget:
    """What Spark writes for ``sink``: our own ``format``/``path``/``options`` win over a connector. In
    local mode (``local_dir``: topics are folders, there is no Connect cluster either) a connector writes
    JSON files to ``<local_dir>/_connect/<model>/`` instead of its external system."""
    if sink.connector is None or sink.format is not None:
        return SinkTarget(sink.format or "parquet", sink.path, dict(sink.options), tuple(sink.key or ()))
    if local_dir is not None:
        key = tuple(sink.key or ()) or _connector_key(sink, model)
        return SinkTarget("json", f"{local_dir.rstrip('/')}/{LOCAL_CONNECT}/{model}", {}, key)
    kind = sink.connector.lower()
    if kind in NO_SPARK_WRITER:
        return SinkTarget(kind, error=f"connector {sink.connector!r}: {NO_SPARK_WRITER[kind]}")
    build = _CONNECTORS.get(kind)
    if build is None:
        known = ", ".join(sorted(k for k in _CONNECTORS if "." not in k))
        return SinkTarget(kind, error=f"connector {sink.connector!r} has no Spark writer here (known: {known}); "
                                      "give `sink: {format: ..., path: ..., options: ...}` for any Spark data source")
    target = build(dict(sink.config), model)
    merged = {**target.options, **sink.options}
    return SinkTarget(target.format, sink.path or target.path, merged, tuple(sink.key or ()) or target.key,
                      target.package, target.unused)


def model_key(model: Model) -> tuple[str, ...]:
    """A sink's upsert key: ``sink.key``, else a connector's ``pk.fields`` (upsert mode), else streamt's
    model-level ``key: order_id`` (a string, maybe comma-separated, or a list)."""
    sink = model.sink_config
    if sink is not None and sink.key:
        return tuple(sink.key)
    if sink is not None:
        target = sink_target(sink, model.name)
        if target.key:
            return target.key
    keys = [model.key] if isinstance(model.key, str) else list(model.key or [])
    return tuple(k.strip() for text in keys for k in text.split(",") if k.strip())
