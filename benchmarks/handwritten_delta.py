#!/usr/bin/env python3
"""The peer pipeline hand-written in PySpark, writing Delta Lake tables: ``shared/peer-bench/handwritten.py``
with ``.write.format("delta").mode("overwrite").save(path)`` and ``spark.read.format("delta").load(path)``
instead of Parquet. The floor ``bench_peers.py`` compares ``streamt run`` with now that streamt's tables
are Delta tables (issue 25).

One SparkSession (local[2]), explicit JSON schemas, the same SQL text, the four outputs written as Delta
tables under OUT; each downstream step reads its input back from the Delta table the step before wrote.
Delta's jars come from the jar cache ``streamt jars fetch delta`` fills (``~/.cache/dagster-streamt/jars/
delta-<delta>-spark-<spark>/``, as ``dagster_streamt/jars`` reads it: no Ivy resolution at each start, no
network, as a tuned user's job would pass ``spark.jars``) with Delta's two session settings. Nothing of
dagster_streamt is imported, so the process pays only what a user's script pays.

Usage: python handwritten_delta.py --data DIR --out DIR [--shuffle-partitions 4] [--master local[2]]
"""

from __future__ import annotations

import argparse
import os
import time
from importlib.metadata import version
from pathlib import Path

from pyspark.sql import SparkSession

DELTA_VERSION = "4.4.0"  # keep in step with dagster_streamt/jars/sets.py
EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

ORDERS_SCHEMA = ("order_id BIGINT, customer_id BIGINT, amount DOUBLE, status STRING, "
                 "ts STRING, country STRING")
CUSTOMERS_SCHEMA = "customer_id BIGINT, name STRING, tier STRING, country STRING"

# The same SQL text as shared/peer-bench/handwritten.py.
SQL = {
    "orders_clean": """
SELECT order_id, customer_id, amount, status, CAST(ts AS TIMESTAMP) AS ts, country
FROM orders_raw
WHERE amount IS NOT NULL AND amount > 0 AND status <> 'cancelled'
""",
    "customer_orders": """
SELECT o.order_id, o.customer_id, o.amount, o.status, o.ts, o.country, c.name, c.tier
FROM orders_clean o
JOIN customers_raw c ON o.customer_id = c.customer_id
""",
    "order_metrics": """
SELECT country, window.start AS window_start, window.end AS window_end,
       count(*) AS order_count, sum(amount) AS total_amount, avg(amount) AS avg_amount
FROM orders_clean
GROUP BY country, window(ts, '1 hour')
""",
    "tier_revenue": """
SELECT tier, sum(amount) AS revenue, count(DISTINCT customer_id) AS distinct_customers
FROM customer_orders
GROUP BY tier
""",
}


def delta_jars() -> list[str]:
    """delta-spark and delta-storage for the installed pyspark, from the jar cache."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dagster-streamt" / "jars"
    folder = base / f"delta-{DELTA_VERSION}-spark-{version('pyspark')}"
    jars = sorted(str(p) for p in folder.glob("*.jar")) if (folder / ".complete").is_file() else []
    if not jars:
        raise SystemExit(f"Delta Lake {DELTA_VERSION}'s jars are not in {folder}: run `streamt jars fetch delta`")
    return jars


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shuffle-partitions", default="4")
    ap.add_argument("--master", default="local[2]")
    a = ap.parse_args()
    t0 = time.time()
    spark = (SparkSession.builder.master(a.master).appName("bench-handwritten-delta")
             .config("spark.jars", ",".join(delta_jars()))
             .config("spark.sql.extensions", EXTENSION)
             .config("spark.sql.catalog.spark_catalog", CATALOG)
             .config("spark.sql.shuffle.partitions", a.shuffle_partitions)
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("WARN")
    t1 = time.time()
    data = os.path.abspath(a.data)
    out = os.path.abspath(a.out)

    spark.read.schema(ORDERS_SCHEMA).json(os.path.join(data, "orders")) \
        .createOrReplaceTempView("orders_raw")
    spark.read.schema(CUSTOMERS_SCHEMA).json(os.path.join(data, "customers")) \
        .createOrReplaceTempView("customers_raw")

    for name in ["orders_clean", "customer_orders", "order_metrics", "tier_revenue"]:
        path = os.path.join(out, name)
        spark.sql(SQL[name]).write.format("delta").mode("overwrite").save(path)
        # downstream steps read the materialized table back
        spark.read.format("delta").load(path).createOrReplaceTempView(name)
    t2 = time.time()
    print(f"handwritten: session {t1 - t0:.1f}s, pipeline {t2 - t1:.1f}s")
    spark.stop()


if __name__ == "__main__":
    main()
