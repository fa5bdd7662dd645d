"""Where Delta Lake's jars are, and the session conf that turns Delta on.

pyspark does not bundle Delta; ``scripts/setup.sh`` (``scripts/delta_jars.sh``) resolves delta-spark and
delta-storage once with mvn into the user's jar cache (the layout :mod:`..kafka.jars` reads), so a session
start needs no Ivy resolution and no network. Delta is built per Spark minor (``delta-spark_4.2_2.13``), so
the folder is named by both versions: ``delta-<delta>-spark-<spark>/``, complete once ``.complete`` exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..kafka.jars import cache_dir, cached_jars, spark_version
from ..spec.project import Project

# Keep in step with scripts/delta_jars.sh's DELTA_VERSION and pyproject's delta-spark pin.
DELTA_VERSION = "4.4.0"
EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


class DeltaJarsMissing(ValueError):
    """The cached Delta jars are not there; the message names the command that fetches them."""


def delta_jars(spark: str | None = None, delta: str = DELTA_VERSION) -> list[Path]:
    """delta-spark and delta-storage ``delta`` for Spark ``spark`` (default: the installed pyspark)."""
    spark = spark or spark_version()
    return cached_jars(cache_dir() / f"delta-{delta}-spark-{spark}", f"Delta Lake {delta} for Spark {spark}",
                       "scripts/delta_jars.sh", DeltaJarsMissing)


def _split(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def with_delta(conf: Mapping[str, str], spark: str | None = None) -> dict[str, str]:
    """``conf`` with Delta's jars appended to ``spark.jars`` (the user's first, no repeats), its SQL
    extension added to ``spark.sql.extensions`` and its catalog as ``spark_catalog`` unless the user set
    one. A conf that brings delta-spark itself (a jar or a package) keeps it: two copies of one class on
    the classpath fail in odd ways."""
    out = dict(conf)
    user = _split(out.get("spark.jars"))
    if not any("delta-spark" in item for item in [*user, *_split(out.get("spark.jars.packages"))]):
        out["spark.jars"] = ",".join(user + [str(j) for j in delta_jars(spark) if str(j) not in user])
    extensions = _split(out.get("spark.sql.extensions"))
    if EXTENSION not in extensions:
        out["spark.sql.extensions"] = ",".join([*extensions, EXTENSION])
    out.setdefault("spark.sql.catalog.spark_catalog", CATALOG)
    return out


def uses_delta(project: Project) -> bool:
    """Whether a run of ``project`` reads or writes Delta: a table or stream model (stored as Delta), a
    Delta source or a Delta sink. Only those sessions pay for Delta's jars."""
    if any(s.resolved_format == "delta" for s in project.sources.values()):
        return True
    for model in project.models.values():
        sink = model.sink_config
        if sink is not None and sink.format == "delta":
            return True
        if model.materialized not in ("view", "sink"):
            return True
    return False
