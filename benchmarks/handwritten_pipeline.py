"""The example project's pipeline hand-written as one plain PySpark script: the baseline that
``bench_orchestration.py`` compares ``streamt run`` with.

Same session settings as the project (``local[2]``, 4 shuffle partitions, UI off, UTC), the same
declared schemas, and the same work:

* orders_clean: a streaming ``availableNow`` query with a checkpoint over the orders JSON folder,
  read PERMISSIVE; valid rows filtered and normalised to Parquet, malformed records to a quarantine
  Parquet folder. ``--quarantine single-pass`` (default) does both in one foreachBatch over a cached
  micro-batch (the JSON is parsed once); ``two-queries`` writes the clean rows with a file sink and
  runs a second availableNow query for the quarantine (the JSON is parsed twice);
* order_metrics: a streaming windowed aggregation (1 hour windows, 10 minute watermark, append)
  over orders_clean's output folder, to Parquet;
* orders_export: orders_clean's output folder streamed to ``exports/orders`` as Parquet;
* customer_orders: batch join of the customers CSV (PERMISSIVE, malformed rows quarantined) with
  orders_clean, aggregated, written as Parquet;
* high_value_orders is a view: nothing to do.

order_metrics and orders_export run as concurrent streaming queries while customer_orders runs.
Row counts are observed in the same passes (``observe``) and printed as one ``COUNTS {...}`` line.

    python benchmarks/handwritten_pipeline.py --data DIR/data --out OUT [--quarantine two-queries]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

ORDERS_DDL = "order_id bigint, customer_id bigint, amount double, status string, ts timestamp"
CUSTOMERS_DDL = "customer_id bigint, name string, email string, country string, signup_date date"
CORRUPT = "_corrupt_record"


def metric(query, name: str, field: str = "rows") -> int:  # type: ignore[no-untyped-def]
    total = 0
    for p in query.recentProgress:
        row = (p.observedMetrics or {}).get(name)
        if row is not None:
            total += int((row if isinstance(row, dict) else row.asDict()).get(field) or 0)
    return total


def clean(df: DataFrame) -> DataFrame:
    return (df.where(F.col(CORRUPT).isNull() & F.col("order_id").isNotNull() & (F.col("amount") > 0))
            .select("order_id", "customer_id", "amount", F.lower(F.trim("status")).alias("status"), "ts"))


def quarantine_rows(df: DataFrame, source: str, columns: list[str]) -> DataFrame:
    """Malformed records with a reason (which reads the data columns, so Spark parses them all)."""
    all_null = F.lit(True)
    for c in columns:
        all_null = all_null & F.col(c).isNull()
    reason = F.when(all_null, F.lit("malformed record")).otherwise(F.lit("record does not match the columns"))
    return df.where(F.col(CORRUPT).isNotNull()).select(
        F.lit(source).alias("source"), F.col(CORRUPT).alias("raw_record"), reason.alias("reason"),
        F.col("_file").alias("source_file"), F.current_timestamp().alias("loaded_at"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="folder with orders/ and customers/")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--quarantine", choices=["single-pass", "two-queries"], default="single-pass")
    ap.add_argument("--fresh", action="store_true", help="delete --out first (outputs and checkpoints)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.fresh:
        shutil.rmtree(args.out, ignore_errors=True)
    out = args.out.resolve()
    chk = out / "_checkpoints"
    clean_dir, metrics_dir = out / "orders_clean", out / "order_metrics"
    export_dir, customers_out = out / "exports" / "orders", out / "customer_orders"
    q_orders, q_customers = out / "orders_raw__quarantine", out / "customers__quarantine"
    for d in (clean_dir, q_orders):
        d.mkdir(parents=True, exist_ok=True)

    spark = (SparkSession.builder.master(args.master).appName("handwritten-shop")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t_session = time.perf_counter()

    # -- orders_clean ---------------------------------------------------------------------------
    raw = (spark.readStream.schema(f"{ORDERS_DDL}, {CORRUPT} string")
           .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
           .json(str(args.data.resolve() / "orders"))
           .withColumn("_file", F.col("_metadata.file_path")))
    order_cols = [c.split()[0] for c in ORDERS_DDL.split(", ")]
    counts: dict[str, int] = {}
    if args.quarantine == "single-pass":
        observed = raw.observe("raw", F.count(F.lit(1)).alias("rows"),
                               F.count(F.when(F.col(CORRUPT).isNotNull(), 1)).alias("bad"))

        written = {"rows": 0}

        def write_batch(batch: DataFrame, batch_id: int) -> None:
            batch = batch.persist()
            obs = Observation(f"clean_{batch_id}")
            clean(batch).observe(obs, F.count(F.lit(1)).alias("rows")).write.mode("append").parquet(str(clean_dir))
            written["rows"] += int(obs.get["rows"])
            quarantine_rows(batch, "orders_raw", order_cols).write.mode("append").parquet(str(q_orders))
            batch.unpersist()

        q = (observed.writeStream.foreachBatch(write_batch).option("checkpointLocation", str(chk / "orders_clean"))
             .trigger(availableNow=True).start())
        q.awaitTermination()
        counts["orders_raw rows"] = metric(q, "raw")
        counts["orders_raw__quarantine"] = metric(q, "raw", "bad")
        counts["orders_clean"] = written["rows"]
    else:
        def write_quarantine(batch: DataFrame, batch_id: int) -> None:
            quarantine_rows(batch, "orders_raw", order_cols).write.mode("append").parquet(str(q_orders))

        quarantine = (raw.observe("bad", F.count(F.when(F.col(CORRUPT).isNotNull(), 1)).alias("rows"))
                      .writeStream.foreachBatch(write_quarantine)
                      .option("checkpointLocation", str(chk / "orders_raw__quarantine"))
                      .trigger(availableNow=True).start())
        quarantine.awaitTermination()
        counts["orders_raw__quarantine"] = metric(quarantine, "bad")
        q = (clean(raw).observe("out", F.count(F.lit(1)).alias("rows"))
             .writeStream.format("parquet").option("path", str(clean_dir))
             .option("checkpointLocation", str(chk / "orders_clean")).trigger(availableNow=True).start())
        q.awaitTermination()
        counts["orders_clean"] = metric(q, "out")
    t_clean = time.perf_counter()

    # -- order_metrics and orders_export: streams over orders_clean's output -------------------
    def clean_stream() -> DataFrame:
        return spark.readStream.schema(ORDERS_DDL).parquet(str(clean_dir))

    metrics_q = (clean_stream().withWatermark("ts", "10 minutes")
                 .groupBy(F.window("ts", "1 hour"))
                 .agg(F.count(F.lit(1)).alias("order_count"), F.sum("amount").alias("revenue"))
                 .select(F.col("window.start").alias("window_start"), F.col("window.end").alias("window_end"),
                         "order_count", "revenue")
                 .observe("metrics_out", F.count(F.lit(1)).alias("rows"))
                 .writeStream.format("parquet").outputMode("append").option("path", str(metrics_dir))
                 .option("checkpointLocation", str(chk / "order_metrics")).trigger(availableNow=True).start())
    export_q = (clean_stream().observe("export_out", F.count(F.lit(1)).alias("rows"))
                .writeStream.format("parquet").option("path", str(export_dir))
                .option("checkpointLocation", str(chk / "orders_export")).trigger(availableNow=True).start())

    # -- customer_orders (batch) -----------------------------------------------------------------
    customers = (spark.read.schema(f"{CUSTOMERS_DDL}, {CORRUPT} string").option("header", "true")
                 .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
                 .csv(str(args.data.resolve() / "customers")).withColumn("_file", F.col("_metadata.file_path"))
                 .cache())
    customer_cols = [c.split()[0] for c in CUSTOMERS_DDL.split(", ")]
    quarantine_rows(customers, "customers", customer_cols).write.mode("append").parquet(str(q_customers))
    c = customers.where(F.col(CORRUPT).isNull()).alias("c")
    o = spark.read.schema(ORDERS_DDL).parquet(str(clean_dir)).alias("o")
    obs = Observation("customer_orders")
    (c.join(o, F.col("o.customer_id") == F.col("c.customer_id"), "left")
     .groupBy("c.customer_id", "c.country")
     .agg(F.count("o.order_id").alias("order_count"), F.coalesce(F.sum("o.amount"), F.lit(0.0)).alias("total_spent"),
          F.max("o.ts").alias("last_order_at"))
     .observe(obs, F.count(F.lit(1)).alias("rows"))
     .write.mode("overwrite").parquet(str(customers_out)))
    counts["customer_orders"] = int(obs.get["rows"])
    t_customers = time.perf_counter()

    metrics_q.awaitTermination()
    export_q.awaitTermination()
    counts["order_metrics"] = metric(metrics_q, "metrics_out")
    counts["orders_export"] = metric(export_q, "export_out")
    t_streams = time.perf_counter()
    spark.stop()
    t_end = time.perf_counter()
    print(f"phases: session {t_session - t0:.1f} s, orders_clean {t_clean - t_session:.1f} s, "
          f"customer_orders {t_customers - t_clean:.1f} s, order_metrics+orders_export done "
          f"{t_streams - t_clean:.1f} s after orders_clean, stop {t_end - t_streams:.1f} s, "
          f"total in-process {t_end - t0:.1f} s")
    print("COUNTS " + json.dumps(counts))


if __name__ == "__main__":
    main()
