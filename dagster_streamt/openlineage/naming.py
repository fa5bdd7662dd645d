"""Dataset names per the OpenLineage naming spec, matching what the OpenLineage Spark listener reports,
so events from this package and from a Spark job reading the same data meet on the same dataset.

* A path (file source, file sink, model table): namespace ``file`` and the absolute path; object
  stores and HDFS use ``scheme://authority`` and the path (``s3://bucket`` + ``key``).
* A model stored in the warehouse: the model's folder ``<warehouse>/<model>``, not the current
  version ``v=...`` or a stream's ``data/`` below it. That folder is stable across runs and is what
  the Spark listener's dataset reducer trims a ``v=...`` partition-like folder back to. A symlink
  ``(<project namespace>, <project>.<model>, TABLE)`` gives the table name.
* JDBC: ``postgres://host:port`` + ``db.schema.table`` (schema ``public`` by default), MySQL
  ``mysql://host:port`` + ``db.table``, SQL Server ``sqlserver://host:port`` + ``db.schema.table``.
* Kafka: ``kafka://host:port`` of the first bootstrap server + the topic.
* Catalog tables: ``hive://host:port`` with a metastore URI, else the catalog name (``spark_catalog``),
  and ``db.table``.
* Views, ``rate`` sources and anything without a location: the project namespace and
  ``<project>.<name>``.

Only host and port are taken from URLs, so credentials in a JDBC URL never reach an event.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from ..core.jdbc_url import split_jdbc_url
from ..spec.connectors import sink_target
from ..spec.models import FILE_FORMATS, Model, SinkConfig
from ..spec.project import Project
from ..spec.topics import local_dir, topic_folder

SESSION_CATALOG = "spark_catalog"
_DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306, "mariadb": 3306, "sqlserver": 1433, "oracle": 1521,
                  "db2": 50000, "redshift": 5439, "kafka": 9092, "hive": 9083, "hdfs": 8020}
_JDBC_SCHEMES = {"postgresql": "postgres", "pgsql": "postgres", "mysql": "mysql", "mariadb": "mysql",
                 "sqlserver": "sqlserver", "db2": "db2", "redshift": "redshift"}
_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "wasbs": "wasbs", "abfss": "abfss",
                  "abfs": "abfss", "dbfs": "dbfs"}
_GLOB = re.compile(r"[*?\[{]")


@dataclass(frozen=True, order=True)
class Symlink:
    namespace: str
    name: str
    type: str = "TABLE"


@dataclass(frozen=True, order=True)
class DatasetId:
    """Where a dataset lives (namespace, name), other names for it, and its kind (TABLE, FILE, ...)."""

    namespace: str
    name: str
    symlinks: tuple[Symlink, ...] = ()
    kind: str = "TABLE"

    @property
    def key(self) -> tuple[str, str]:
        return self.namespace, self.name


# -- locations -----------------------------------------------------------------------------------
def location_dataset(location: str | Path, kind: str = "FILE") -> DatasetId:
    """A path or URI: ``file`` + absolute path, ``s3://bucket`` + key, ``hdfs://host:port`` + path."""
    text = str(location)
    if "://" not in text and not text.startswith("file:"):
        return DatasetId("file", _strip_glob(Path(text).expanduser().resolve().as_posix()), kind=kind)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    path = _strip_glob(parts.path or "/")
    if scheme == "file":
        host = parts.netloc if parts.netloc not in ("", "localhost") else ""
        return DatasetId(f"file://{host}" if host else "file", path, kind=kind)
    if scheme in _OBJECT_STORES:
        return DatasetId(f"{_OBJECT_STORES[scheme]}://{parts.netloc}", path.lstrip("/") or "/", kind=kind)
    if scheme == "hdfs":
        port = parts.port or _DEFAULT_PORTS["hdfs"]
        return DatasetId(f"hdfs://{parts.hostname}:{port}", path, kind=kind)
    return DatasetId(f"{scheme}://{parts.netloc}", path, kind=kind)


def _strip_glob(path: str) -> str:
    """``/data/orders/*.json`` reads the folder ``/data/orders``: name the folder, not the pattern."""
    if not _GLOB.search(path):
        return path
    kept = list(itertools.takewhile(lambda part: not _GLOB.search(part), PurePosixPath(path).parts))
    return str(PurePosixPath(*kept)) if kept else "/"


# -- JDBC ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JdbcTarget:
    scheme: str  # OpenLineage scheme: postgres, mysql, sqlserver, oracle, ...
    host: str
    port: int | None
    database: str

    @property
    def namespace(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}" if self.port else f"{self.scheme}://{self.host}"


def parse_jdbc_url(url: str) -> JdbcTarget:
    """``jdbc:postgresql://h:5432/db?...`` -> (postgres, h, 5432, db); credentials are dropped."""
    parts = split_jdbc_url(url)
    scheme = _JDBC_SCHEMES.get(parts.subprotocol, parts.subprotocol)
    if parts.host is None and scheme == "oracle":  # a TNS descriptor: nothing to name it by
        return JdbcTarget("oracle", "unknown", None, "")
    return JdbcTarget(scheme, (parts.host or "localhost").lower(), parts.port or _DEFAULT_PORTS.get(scheme),
                      parts.database)


def jdbc_dataset(url: str, dbtable: str | None, query: str | None = None) -> DatasetId:
    """``postgres://host:port`` + ``db.schema.table``; a ``query`` read is named by a hash of its text."""
    target = parse_jdbc_url(url)
    if dbtable and dbtable.strip().startswith("("):  # Spark accepts a subquery as dbtable
        dbtable, query = None, dbtable
    if not dbtable:
        digest = hashlib.sha256((query or "").encode()).hexdigest()[:12]
        return DatasetId(target.namespace, _join(target.database, f"query_{digest}"), kind="QUERY")
    parts = [p.strip('"`[]') for p in dbtable.split(".")]
    if target.scheme in ("mysql", "hive", "teradata"):  # no schemas: db.table (a qualified dbtable wins)
        name = ".".join(parts) if len(parts) > 1 else _join(target.database, parts[0])
    else:
        default_schema = {"postgres": "public", "sqlserver": "dbo", "redshift": "public"}.get(target.scheme)
        if len(parts) == 1:
            parts = [default_schema, parts[0]] if default_schema else parts
        name = ".".join(parts) if len(parts) >= 3 else _join(target.database, ".".join(parts))
    return DatasetId(target.namespace, name, kind="TABLE")


def _join(*parts: str | None) -> str:
    return ".".join(p for p in parts if p)


# -- Kafka ---------------------------------------------------------------------------------------
def kafka_namespace(bootstrap_servers: str) -> str:
    """``kafka://host:port`` of the first bootstrap server (``SASL_SSL://h:9093,h2:9093`` -> h:9093)."""
    first = bootstrap_servers.split(",")[0].strip().split("://", 1)[-1]
    host, _, port = first.rpartition(":") if ":" in first else (first, "", "")
    return f"kafka://{host or first}:{port or _DEFAULT_PORTS['kafka']}"


def kafka_datasets(bootstrap_servers: str | None, topics: str) -> tuple[DatasetId, ...]:
    namespace = kafka_namespace(bootstrap_servers) if bootstrap_servers else "kafka://unknown:9092"
    return tuple(DatasetId(namespace, t.strip(), kind="TOPIC") for t in topics.split(",") if t.strip())


# -- catalog tables ------------------------------------------------------------------------------
def catalog_dataset(project: Project, table: str) -> DatasetId:
    """A catalog table: Hive metastore ``hive://host:port``, another catalog by its name, else
    ``spark_catalog``; the name is ``db.table`` (``runtime.spark.database`` when unqualified)."""
    parts = table.replace("`", "").split(".")
    spark = project.runtime.spark
    catalog = SESSION_CATALOG
    if len(parts) >= 3:
        catalog, parts = parts[0], parts[1:]
    if len(parts) == 1:
        parts = [spark.database, parts[0]]
    name = ".".join(parts)
    if catalog == SESSION_CATALOG:
        uri = spark.conf.get("spark.hadoop.hive.metastore.uris") or spark.conf.get("spark.sql.hive.metastore.uris")
        if uri and spark.conf.get("spark.sql.catalogImplementation") == "hive":
            first = urlsplit(uri.split(",")[0].strip())
            return DatasetId(f"hive://{first.hostname}:{first.port or _DEFAULT_PORTS['hive']}", name)
    return DatasetId(catalog, name)


# -- the project ---------------------------------------------------------------------------------
def project_namespace(project: Project, override: str | None = None) -> str:
    """Job namespace: explicit, ``runtime.openlineage.namespace``, ``$OPENLINEAGE_NAMESPACE``, project name."""
    return (override or project.runtime.openlineage.namespace or os.environ.get("OPENLINEAGE_NAMESPACE")
            or project.name)


def warehouse_root(project: Project) -> str:
    """``runtime.spark.warehouse`` made absolute the way :class:`ProjectPaths` does (without
    importing the Spark package); a URI warehouse is kept as is."""
    value = project.runtime.spark.warehouse
    if "://" in value:
        return value.rstrip("/")
    return project.resolve_path(value).resolve().as_posix()


class ProjectNaming:
    """Dataset identities of every source, model and exposure of one project."""

    def __init__(self, project: Project, namespace: str | None = None) -> None:
        self.project = project
        self.namespace = project_namespace(project, namespace)

    def logical(self, name: str, kind: str = "TABLE") -> DatasetId:
        return DatasetId(self.namespace, f"{self.project.name}.{name}", kind=kind)

    def symlink(self, name: str) -> Symlink:
        return Symlink(self.namespace, f"{self.project.name}.{name}", "TABLE")

    def model_dir(self, name: str) -> str:
        return f"{warehouse_root(self.project)}/{name}"

    # relations ---------------------------------------------------------------------------------
    def relation(self, name: str) -> tuple[DatasetId, ...]:
        """The datasets behind a relation name used in SQL (models first, as Spark resolves them)."""
        if name in self.project.models:
            return (self.model(name),)
        if name in self.project.sources:
            return self.source(name)
        return (self.logical(name),)

    def model(self, name: str) -> DatasetId:
        model = self.project.models[name]
        kind = model.materialized or self.project.defaults.models.materialized or "table"
        if kind == "view":
            return self.logical(name, "VIEW")
        if kind == "sink":
            ds = self.sink(model)
        else:
            ds = location_dataset(self.model_dir(name), "STREAM" if kind == "stream" else "TABLE")
        return replace(ds, symlinks=(self.symlink(name),))

    def sink(self, model: Model) -> DatasetId:
        sink = model.sink_config or SinkConfig()
        target = sink_target(sink, model.name, local_dir(self.project))
        fmt, path, options = target.format, target.path, target.options
        if fmt in (*FILE_FORMATS, "delta") and path:
            return location_dataset(self._path(path), "TABLE" if fmt == "delta" else "FILE")
        if fmt == "jdbc" and "url" in options:
            return jdbc_dataset(options["url"], options.get("dbtable"))
        if fmt == "kafka":
            topic = options.get("topic") or str(sink.config.get("topic", "") or "") or model.name
            ds = kafka_datasets(self._bootstrap(options), topic)
            if ds:
                return ds[0]
        if path:
            return location_dataset(self._path(path))
        return self.logical(model.name)

    def source(self, name: str) -> tuple[DatasetId, ...]:
        src = self.project.sources[name]
        fmt = src.resolved_format
        found: tuple[DatasetId, ...] = ()
        if fmt in FILE_FORMATS or fmt == "delta":
            found = (location_dataset(self._path(src.path or ""), "TABLE" if fmt == "delta" else "FILE"),)
        elif fmt == "jdbc":
            found = (jdbc_dataset(src.options["url"], src.options.get("dbtable"), src.options.get("query")),)
        elif fmt == "kafka":
            topics = src.topic or src.options.get("subscribe") or src.options.get("subscribePattern") or name
            folder = topic_folder(self.project, topics)
            if folder is not None:  # local mode: the topic is a folder of JSON-lines files
                found = (location_dataset(folder.resolve().as_posix(), "FILE"),)
            else:
                found = kafka_datasets(self._bootstrap(src.options), topics)
        elif fmt == "table" and src.table:
            found = (catalog_dataset(self.project, src.table),)
        elif fmt == "rate":
            return (self.logical(name, "STREAM"),)  # generated rows: no location to name
        return tuple(replace(d, symlinks=(self.symlink(name),)) for d in found) or (self.logical(name),)

    def _path(self, value: str) -> str:
        return value if "://" in value else self.project.resolve_path(value).resolve().as_posix()

    def _bootstrap(self, options: dict[str, str]) -> str | None:
        kafka = self.project.runtime.kafka
        return (options.get("kafka.bootstrap.servers") or options.get("bootstrap.servers")
                or (kafka.bootstrap_servers if kafka else None))

