"""Warm a freshly started project server before the next run needs it.

A new JVM runs its first queries several times slower than later ones: the JSON parser, the
Parquet writer, joins and aggregations are still interpreted until the JIT compiles them. A run
that connects to a new server would pay that; so the detached starter that brought the server up
runs this small built-in workload through it first (synthetic orders written as JSON, then parsed
with a corrupt-record column and observed metrics, filtered, written as Parquet, joined, grouped
by a time window, counted distinct: the shapes of typical models). It writes only under the
server's state folder and deletes what it wrote; ``warm`` records when it finished.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

ROWS = 300_000
ROUNDS = 2
SCHEMA = ("order_id BIGINT, customer_id BIGINT, amount DOUBLE, status STRING, ts STRING, country STRING, "
          "_corrupt_record STRING")


def warm_up(url: str, folder: Path) -> None:
    from pyspark.sql import Observation, SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.builder.remote(url).getOrCreate()
    scratch = folder / "warm-up"
    try:
        for _ in range(ROUNDS):
            shutil.rmtree(scratch, ignore_errors=True)
            spark.range(ROWS).selectExpr(
                "id AS order_id", "id % 20000 AS customer_id", "CAST(id % 997 AS DOUBLE) / 10 AS amount",
                "IF(id % 11 = 0, 'cancelled', 'completed') AS status",
                "CAST(timestamp_seconds(1700000000 + id * 7) AS STRING) AS ts",
                "element_at(array('FR', 'DE', 'ES', 'IT'), CAST(id % 4 + 1 AS INT)) AS country",
            ).write.json(str(scratch / "raw"))
            raw = (spark.read.schema(SCHEMA).option("mode", "PERMISSIVE")
                   .option("columnNameOfCorruptRecord", "_corrupt_record").json(str(scratch / "raw"))
                   .withColumn("_file", F.col("_metadata.file_path")))
            corrupt = F.col("_corrupt_record").isNotNull()
            observed = raw.observe(Observation(), F.count(F.lit(1)).alias("rows"),
                                   F.count(F.when(corrupt, 1)).alias("bad"))
            (observed.where(~corrupt & (F.col("amount") > 0) & (F.col("status") != "cancelled"))
             .select("order_id", "customer_id", "amount", F.col("ts").cast("timestamp").alias("ts"), "country")
             .write.parquet(str(scratch / "clean")))
            clean = spark.read.parquet(str(scratch / "clean"))
            customers = spark.range(20000).selectExpr("id AS customer_id", "concat('c', id) AS name",
                                                      "IF(id % 3 = 0, 'gold', 'silver') AS tier")
            clean.join(customers, "customer_id").write.parquet(str(scratch / "joined"))
            (clean.groupBy("country", F.window("ts", "1 hour"))
             .agg(F.count(F.lit(1)), F.sum("amount"), F.avg("amount")).write.parquet(str(scratch / "windows")))
            (spark.read.parquet(str(scratch / "joined")).groupBy("tier")
             .agg(F.sum("amount"), F.countDistinct("customer_id")).collect())
        (folder / "warm").write_text(time.strftime("%Y-%m-%dT%H:%M:%S"), encoding="utf-8")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        spark.stop()
