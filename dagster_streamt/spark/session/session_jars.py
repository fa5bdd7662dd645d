"""Which jar sets a project's sessions get, merged into their conf with Delta's extension and catalog.

Every session gets Delta Lake (one session may serve several projects, and a view may come to read a
Delta table); Spark's Kafka and Avro connectors when the project reaches a Kafka broker; Hadoop's S3A
connector when it names an ``s3a://`` location. The jars come from :mod:`..jars` (resolved once by
Spark's Ivy, then cached), under the jar policy ``runtime.spark.jars`` (or ``STREAMT_JARS``):
``fetch`` (default) resolves what is missing, ``cache`` only reads the cache, ``provided`` adds no jars
because the platform has them (Databricks, EMR, Glue, a cluster image). A conf that brings a set itself
(a jar or a package of ``spark.jars`` / ``spark.jars.packages``) keeps its own: two copies of one class
on the classpath fail in odd ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...core.object_stores import store_kind
from ...jars import sets
from ...jars.fetch import jars_for, policy
from ...jars.sets import JarSet, JarsUnavailable
from ...spec.project import Project
from ...spec.topics import uses_kafka_broker

EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
# what, in the user's spark.jars or spark.jars.packages, means the user brings a set themselves
_OWN = {"delta": "delta-spark", "kafka": "spark-sql-kafka", "s3": "hadoop-aws"}


def uses_delta(project: Project) -> bool:
    """Whether a run of ``project`` reads or writes Delta: a table or stream model (stored as Delta), a
    Delta source or a Delta sink. Only those fail without Delta's jars."""
    if any(s.resolved_format == "delta" for s in project.sources.values()):
        return True
    for model in project.models.values():
        sink = model.sink_config
        if sink is not None and sink.format == "delta":
            return True
        if model.materialized not in ("view", "sink"):
            return True
    return False


def uses_s3a(project: Project) -> bool:
    """Whether the project names an ``s3a://`` location: its warehouse, a source's or a sink's path."""
    places = [project.runtime.spark.warehouse, *(s.path or "" for s in project.sources.values())]
    for model in project.models.values():
        sink = model.sink_config
        if sink is not None:
            places.append(sink.path or "")
    return any(store_kind(p) == "s3" for p in places)


def _split(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def with_jars(conf: Mapping[str, str], jars: list[Path]) -> dict[str, str]:
    """``conf`` with ``jars`` appended to ``spark.jars`` (the user's first, no repeats).

    >>> with_jars({"spark.jars": "/x/pg.jar"}, [Path("/c/a.jar"), Path("/x/pg.jar")])["spark.jars"]
    '/x/pg.jar,/c/a.jar'
    """
    out = dict(conf)
    user = _split(out.get("spark.jars"))
    out["spark.jars"] = ",".join(user + [str(j) for j in jars if str(j) not in user])
    return out


def brings_own(conf: Mapping[str, str], key: str) -> bool:
    """Whether ``conf`` already brings the set ``key`` (a jar or package naming its main artifact)."""
    return any(_OWN[key] in item for item in [*_split(conf.get("spark.jars")),
                                              *_split(conf.get("spark.jars.packages"))])


def with_delta_conf(conf: Mapping[str, str]) -> dict[str, str]:
    """Delta's SQL extension added to ``spark.sql.extensions`` and its catalog as ``spark_catalog`` unless
    the user set one.

    >>> with_delta_conf({"spark.sql.extensions": "my.Ext"})["spark.sql.extensions"]
    'my.Ext,io.delta.sql.DeltaSparkSessionExtension'
    """
    out = dict(conf)
    extensions = _split(out.get("spark.sql.extensions"))
    if EXTENSION not in extensions:
        out["spark.sql.extensions"] = ",".join([*extensions, EXTENSION])
    out.setdefault("spark.sql.catalog.spark_catalog", CATALOG)
    return out


def needed_sets(project: Project) -> list[JarSet]:
    """The jar sets a session of ``project`` needs, Delta first."""
    needed = [sets.delta()]
    if uses_kafka_broker(project):
        needed.append(sets.kafka())
    if uses_s3a(project):
        needed.append(sets.s3())
    return needed


def session_jars(project: Project, conf: Mapping[str, str]) -> dict[str, str]:
    """``conf`` with the jars of :func:`needed_sets` (as the jar policy allows) and Delta's conf.

    Raises :class:`JarsUnavailable` when a set the project needs cannot be had; Delta's, for a project
    that stores nothing in Delta, is then left out quietly."""
    mode = policy(project.runtime.spark.jars)
    out, delta_on = dict(conf), True
    for jar_set in needed_sets(project):
        if mode == "provided" or brings_own(out, jar_set.key):
            continue
        try:
            out = with_jars(out, jars_for(jar_set, mode, out))
        except JarsUnavailable:
            if jar_set.key != "delta" or uses_delta(project):
                raise
            delta_on = False  # no Delta at all: no extension naming classes that are not there
    return with_delta_conf(out) if delta_on else out
