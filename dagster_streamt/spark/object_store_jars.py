"""Hadoop's S3A connector for sessions that reach ``s3a://`` paths.

pyspark bundles Hadoop's client but not its object store connectors. ``scripts/setup.sh``
(``scripts/object_store_jars.sh``) resolves hadoop-aws at the bundled Hadoop's exact version, with the AWS
SDK modules it calls, once with mvn into the user's jar cache: ``hadoop-aws-<hadoop version>/``. A session
whose project names an ``s3a://`` location (the warehouse, a source, a sink) gets them on ``spark.jars``.
Google's and Azure's connectors (``gs://``, ``abfss://``) are the cluster's to provide (Dataproc and
Databricks/HDInsight ship them): the project's ``spark.jars`` or ``spark.jars.packages``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib.util import find_spec
from pathlib import Path

from ..core.object_stores import store_kind
from ..kafka.jars import cache_dir, cached_jars
from ..spec.project import Project

_CLIENT = re.compile(r"hadoop-client-api-(\d+\.\d+\.\d+)\.jar$")


class ObjectStoreJarsMissing(ValueError):
    """The cached S3A jars are not there; the message names the command that fetches them."""


def hadoop_version() -> str:
    """The version of the Hadoop client pyspark bundles (its ``hadoop-client-api`` jar)."""
    spec = find_spec("pyspark")
    folder = Path(spec.origin).parent / "jars" if spec is not None and spec.origin else None
    for jar in sorted(folder.glob("hadoop-client-api-*.jar")) if folder is not None else []:
        m = _CLIENT.search(jar.name)
        if m:
            return m.group(1)
    raise ObjectStoreJarsMissing("pyspark's bundled Hadoop client was not found (no hadoop-client-api jar)")


def s3_jars(hadoop: str | None = None) -> list[Path]:
    hadoop = hadoop or hadoop_version()
    return cached_jars(cache_dir() / f"hadoop-aws-{hadoop}", f"Hadoop's S3A connector (hadoop-aws {hadoop})",
                       "scripts/object_store_jars.sh", ObjectStoreJarsMissing)


def uses_s3a(project: Project) -> bool:
    """Whether the project names an ``s3a://`` location: its warehouse, a source's or a sink's path."""
    places = [project.runtime.spark.warehouse, *(s.path or "" for s in project.sources.values())]
    for model in project.models.values():
        sink = model.sink_config
        if sink is not None:
            places.append(sink.path or "")
    return any(store_kind(p) == "s3" for p in places)


def with_s3(conf: Mapping[str, str], hadoop: str | None = None) -> dict[str, str]:
    """``conf`` with the S3A jars appended to ``spark.jars``, unless the project brings hadoop-aws itself."""
    out = dict(conf)
    user = [p.strip() for p in out.get("spark.jars", "").split(",") if p.strip()]
    packages = out.get("spark.jars.packages", "")
    if any("hadoop-aws" in item for item in [*user, packages]):
        return out
    out["spark.jars"] = ",".join(user + [str(j) for j in s3_jars(hadoop) if str(j) not in user])
    return out
