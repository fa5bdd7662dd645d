"""Each step of the hand-written Delta job (``handwritten_delta.py``) timed in one session, then a warm
overwrite of each small table and a warm MERGE, with extra Spark settings given as KEY=VALUE: what a
Delta setting buys, without streamt (issue 25's profile: Delta's log replay at
``spark.databricks.delta.snapshotPartitions`` = 50 tasks).

    flock /tmp/spark.lock python3 benchmarks/delta_steps.py DATA OUT
    flock /tmp/spark.lock python3 benchmarks/delta_steps.py DATA OUT2 spark.databricks.delta.snapshotPartitions=2

DATA: a peer-bench data folder (``orders/``, ``customers/``); OUT: an empty scratch folder.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import handwritten_delta as h
from pyspark.sql import SparkSession

data, out = sys.argv[1], sys.argv[2]
extra = dict(a.split("=", 1) for a in sys.argv[3:])
t0 = time.time()
b = (SparkSession.builder.master("local[2]").appName("delta-steps")
     .config("spark.jars", ",".join(h.delta_jars()))
     .config("spark.sql.extensions", h.EXTENSION)
     .config("spark.sql.catalog.spark_catalog", h.CATALOG)
     .config("spark.sql.shuffle.partitions", "4")
     .config("spark.sql.session.timeZone", "UTC"))
for k, v in extra.items():
    b = b.config(k, v)
spark = b.getOrCreate()
spark.sparkContext.setLogLevel("WARN")
print(f"session {time.time() - t0:.1f}", flush=True)
spark.read.schema(h.ORDERS_SCHEMA).json(os.path.join(data, "orders")).createOrReplaceTempView("orders_raw")
spark.read.schema(h.CUSTOMERS_SCHEMA).json(os.path.join(data, "customers")).createOrReplaceTempView("customers_raw")
for name in ["orders_clean", "customer_orders", "order_metrics", "tier_revenue"]:
    path = os.path.join(out, name)
    t = time.time()
    spark.sql(h.SQL[name]).write.format("delta").mode("overwrite").save(path)
    t2 = time.time()
    spark.read.format("delta").load(path).createOrReplaceTempView(name)
    t3 = time.time()
    print(f"{name}: write {t2 - t:.1f} read {t3 - t2:.1f}", flush=True)
# a second overwrite of the small tables: the warm cost of a commit
for name in ["order_metrics", "tier_revenue"]:
    path = os.path.join(out, name)
    t = time.time()
    spark.read.format("delta").load(path).write.format("delta").mode("overwrite").save(path + "_2")
    print(f"{name} copy (warm write): {time.time() - t:.1f}", flush=True)
t = time.time()
spark.sql(f"MERGE INTO delta.`{out}/order_metrics_2` t USING order_metrics s ON t.country <=> s.country AND "
          "t.window_start <=> s.window_start "
          "WHEN MATCHED THEN UPDATE SET t.order_count = t.order_count + s.order_count "
          "WHEN NOT MATCHED THEN INSERT *").collect()
print(f"MERGE (warm): {time.time() - t:.1f}", flush=True)
print(f"total {time.time() - t0:.1f}")
spark.stop()
