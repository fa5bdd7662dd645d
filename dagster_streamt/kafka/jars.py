"""Where the Kafka jars are: Spark's Kafka and Avro connectors (pyspark does not bundle them) and a
Kafka broker, resolved once with mvn by ``scripts/setup.sh`` (``scripts/kafka_jars.sh``) into the user's
cache. Reading a local folder instead of ``spark.jars.packages`` means no Ivy resolution, and no network,
at every session start.

Layout, shared with scripts/kafka_jars.sh: ``${XDG_CACHE_HOME:-~/.cache}/dagster-streamt/jars/``
``spark-kafka-<spark version>/`` and ``kafka-broker-<kafka version>/``, each complete once it holds a
``.complete`` marker (written last, so a half-copied folder never counts).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

# The broker scripts/kafka_jars.sh resolves: the newest Kafka 4.x served. 4.x brokers serve clients from
# 2.1 on, so Spark 4.2's kafka-clients 3.9 talks to it. Keep in step with that script's KAFKA_VERSION.
KAFKA_VERSION = "4.4.0"
FETCH_COMMAND = "bash scripts/setup.sh"
MARKER = ".complete"


class KafkaJarsMissing(ValueError):
    """The cached jars for Kafka are not there; the message names the command that fetches them."""


def cache_dir() -> Path:
    """The jar cache, read at each call so that a changed XDG_CACHE_HOME (tests, CI) takes effect."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dagster-streamt" / "jars"


def spark_version() -> str:
    """The installed pyspark's version, from its metadata (no pyspark import: that costs a second)."""
    try:
        return version("pyspark")
    except PackageNotFoundError:
        import pyspark  # a source checkout on sys.path without metadata

        return str(pyspark.__version__)


def cached_jars(folder: Path, what: str, script: str, missing: type[ValueError]) -> list[Path]:
    """The jars of a complete cache folder; else ``missing`` naming ``what``, the folder and the commands
    that fill it (``script``: the one step of ``scripts/setup.sh`` that does)."""
    jars = sorted(folder.glob("*.jar")) if (folder / MARKER).is_file() else []
    if not jars:
        raise missing(
            f"{what} is not in {folder}: run `{FETCH_COMMAND}` in the dagster-streamt checkout (it resolves "
            f"the jars with mvn from Maven Central into that cache once; `bash {script}` does only that step)")
    return jars


def _complete_jars(folder: Path, what: str) -> list[Path]:
    return cached_jars(folder, what, "scripts/kafka_jars.sh", KafkaJarsMissing)


def connector_jars(spark: str | None = None) -> list[Path]:
    """Spark's Kafka connector (with kafka-clients, the token provider, commons-pool2) and Avro jars for
    Spark ``spark`` (default: the installed pyspark), without anything pyspark already bundles."""
    spark = spark or spark_version()
    return _complete_jars(cache_dir() / f"spark-kafka-{spark}",
                          f"Spark's Kafka connector for Spark {spark} (pyspark does not bundle it)")


def broker_jars(kafka: str = KAFKA_VERSION) -> list[Path]:
    """Every jar a Kafka ``kafka`` broker runs with (``kafka.Kafka``, ``kafka.tools.StorageTool``)."""
    return _complete_jars(cache_dir() / f"kafka-broker-{kafka}", f"The Kafka {kafka} broker")


def broker_classpath(kafka: str = KAFKA_VERSION) -> str:
    """:func:`broker_jars` as a ``java -cp`` argument."""
    return os.pathsep.join(str(j) for j in broker_jars(kafka))


def _split(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def with_connector_jars(conf: Mapping[str, str], spark: str | None = None) -> dict[str, str]:
    """``conf`` with the cached connector jars appended to ``spark.jars`` (the user's jars first, no
    repeats). A conf that already brings a Kafka connector itself (a spark-sql-kafka jar or package)
    is returned as it is: two connector copies on one classpath fail in odd ways."""
    out = dict(conf)
    user = _split(out.get("spark.jars"))
    if any("spark-sql-kafka" in item for item in [*user, *_split(out.get("spark.jars.packages"))]):
        return out
    jars = user + [str(j) for j in connector_jars(spark) if str(j) not in user]
    out["spark.jars"] = ",".join(jars)
    return out
