"""Which jars a run needs beyond pyspark, at which versions: the one place that knows them.

pyspark bundles Spark, Scala and Hadoop's client, not Delta Lake, Spark's Kafka and Avro connectors,
Hadoop's S3A connector or a Kafka broker. Each of those is a :class:`JarSet`: Maven coordinates as
``spark.jars.packages`` takes them, the dependencies left out on purpose (``spark.jars.excludes``), and
whether it runs inside Spark (then a jar pyspark already bundles, at any version, is dropped: two copies
of one class on Spark's classpath fail in odd ways). :mod:`.fetch` resolves a set once and caches it.

>>> delta("4.2.0").packages
('io.delta:delta-spark_4.2_2.13:4.4.0',)
>>> sorted(SETS)
['broker', 'delta', 'kafka', 's3']
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path

# Delta Lake is built per Spark minor (delta-spark_4.2_2.13 for Spark 4.2.x); keep in step with
# pyproject's delta-spark pin (its Python API).
DELTA_VERSION = "4.4.0"
# The local broker: the newest Kafka 4.x served. 4.x brokers serve clients from 2.1 on, so Spark 4.2's
# kafka-clients 3.9 talks to it. Kafka 4.x logs through SLF4J; log4j-slf4j-impl routes it to log4j2.
KAFKA_VERSION = "4.4.0"
LOG4J_VERSION = "2.25.5"
# hadoop-aws depends on the AWS SDK's `bundle` (686 MB: every service shaded into one jar); S3A calls only
# S3, its transfer manager and STS (assumed roles), at the SDK version hadoop-aws itself names.
AWS_SDK_FOR_HADOOP = {"3.5.0": "2.35.4"}
SCALA = "2.13"

_CLIENT = re.compile(r"hadoop-client-api-(\d+\.\d+\.\d+)\.jar$")


class JarsUnavailable(ValueError):
    """A jar set cannot be had: not cached where downloads are off, or not resolvable. The message says
    what is missing, where it was looked for, and the command or setting that fixes it."""


@dataclass(frozen=True)
class JarSet:
    """One unit of jars, resolved and cached together.

    ``key``: its name on the command line (``streamt jars fetch delta``); ``what``: for messages;
    ``folder``: its cache folder, named by every version it depends on; ``packages``: Maven coordinates;
    ``excludes``: ``group:artifact`` left out of the resolution; ``in_spark``: loaded into Spark's JVM
    (drop what pyspark bundles), or a JVM of its own (the broker: keep everything); ``from_pyspark``:
    artifacts taken from pyspark's own jars because Spark's Ivy always leaves them out (scala-library).
    """

    key: str
    what: str
    folder: str
    packages: tuple[str, ...]
    excludes: tuple[str, ...] = ()
    in_spark: bool = True
    from_pyspark: tuple[str, ...] = ()

    @property
    def stamp(self) -> str:
        """What a cached folder must have been resolved for: a changed coordinate or exclusion resolves anew."""
        text = "\n".join([*self.packages, "--", *self.excludes, "--", *self.from_pyspark, str(self.in_spark)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def spark_version() -> str:
    """The installed pyspark's version, from its metadata (no pyspark import: that costs a second)."""
    try:
        return version("pyspark")
    except PackageNotFoundError:
        import pyspark  # a source checkout on sys.path without metadata

        return str(pyspark.__version__)


def pyspark_jars_dir() -> Path:
    """pyspark's own jars/ folder: what every Spark session already has on its classpath."""
    spec = find_spec("pyspark")
    if spec is None or not spec.origin:
        raise JarsUnavailable("pyspark is not installed: `pip install dagster-streamt` brings it")
    return Path(spec.origin).parent / "jars"


def hadoop_version() -> str:
    """The version of the Hadoop client pyspark bundles (its ``hadoop-client-api`` jar)."""
    folder = pyspark_jars_dir()
    for jar in sorted(folder.glob("hadoop-client-api-*.jar")) if folder.is_dir() else []:
        m = _CLIENT.search(jar.name)
        if m:
            return m.group(1)
    raise JarsUnavailable(f"pyspark's bundled Hadoop client was not found (no hadoop-client-api jar in {folder})")


def _minor(spark: str) -> str:
    return ".".join(spark.split(".")[:2])


def delta(spark: str | None = None, delta_version: str = DELTA_VERSION) -> JarSet:
    """delta-spark (data source, SQL extension, catalog, DeltaTable) and delta-storage (atomic log commits).
    Left out: Delta Kernel and the Unity Catalog client, which serve catalog-managed tables that
    path-based tables never load, and Scala (pyspark's)."""
    spark = spark or spark_version()
    return JarSet(
        "delta", f"Delta Lake {delta_version} for Spark {spark}", f"delta-{delta_version}-spark-{spark}",
        (f"io.delta:delta-spark_{_minor(spark)}_{SCALA}:{delta_version}",),
        ("io.delta:delta-kernel-api", "io.delta:delta-kernel-defaults", "io.delta:delta-kernel-unitycatalog",
         "io.unitycatalog:unitycatalog-client", "io.unitycatalog:unitycatalog-hadoop"))


def kafka(spark: str | None = None) -> JarSet:
    """Spark's Kafka connector (with kafka-clients, its token provider and commons-pool2) and spark-avro,
    at Spark's exact version (Spark's Ivy leaves Spark's own modules out by itself)."""
    spark = spark or spark_version()
    return JarSet(
        "kafka", f"Spark's Kafka and Avro connectors for Spark {spark}", f"spark-kafka-{spark}",
        (f"org.apache.spark:spark-sql-kafka-0-10_{SCALA}:{spark}", f"org.apache.spark:spark-avro_{SCALA}:{spark}"),
        ("org.apache.hadoop:hadoop-client-runtime", "org.apache.hadoop:hadoop-client-api",
         "com.google.code.findbugs:jsr305", "org.lz4:lz4-java", "at.yawk.lz4:lz4-java",
         "org.xerial.snappy:snappy-java", "com.github.luben:zstd-jni", "org.slf4j:slf4j-api",
         "org.scala-lang:scala-library", "org.apache.avro:avro", "org.tukaani:xz"))


def s3(hadoop: str | None = None) -> JarSet:
    """Hadoop's S3A connector (``s3a://``) at the bundled Hadoop's exact version, with the AWS SDK modules
    it calls instead of the SDK's 686 MB bundle."""
    hadoop = hadoop or hadoop_version()
    sdk = AWS_SDK_FOR_HADOOP.get(hadoop)
    if sdk is None:
        raise JarsUnavailable(
            f"no AWS SDK version is known for hadoop-aws {hadoop} (known: {', '.join(sorted(AWS_SDK_FOR_HADOOP))}): "
            "add `org.apache.hadoop:hadoop-aws:<version>` to runtime.spark.conf's spark.jars.packages yourself")
    return JarSet(
        "s3", f"Hadoop's S3A connector (hadoop-aws {hadoop})", f"hadoop-aws-{hadoop}",
        (f"org.apache.hadoop:hadoop-aws:{hadoop}", *(f"software.amazon.awssdk:{m}:{sdk}"
                                                      for m in ("s3", "s3-transfer-manager", "sts"))),
        ("software.amazon.awssdk:bundle",))


def broker(kafka_version: str = KAFKA_VERSION) -> JarSet:
    """A Kafka broker (KRaft: broker and controller in one JVM of its own), for ``streamt kafka start``.
    Its Scala library is pyspark's (the same 2.13): Spark's Ivy never resolves scala-library."""
    return JarSet(
        "broker", f"The Kafka {kafka_version} broker", f"kafka-broker-{kafka_version}",
        (f"org.apache.kafka:kafka_{SCALA}:{kafka_version}",
         f"org.apache.logging.log4j:log4j-slf4j-impl:{LOG4J_VERSION}"),
        in_spark=False, from_pyspark=("scala-library",))


SETS: dict[str, Callable[[], JarSet]] = {"delta": delta, "kafka": kafka, "s3": s3, "broker": broker}
