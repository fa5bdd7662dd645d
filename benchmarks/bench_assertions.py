"""Benchmark the data-test engine: 20 assertions over 2 million rows vs one hand-written Spark query.

Usage: ``python benchmarks/bench_assertions.py [--rows 2000000] [--repeat 3]``

Generates orders (written once to Parquet in a temp dir and read back, so both sides scan files),
then times :func:`run_test` (one aggregate statement, plus a failing-row sample for the one
assertion that fails) against a single hand-written query computing the same counts. Prints the
median of ``--repeat`` alternating runs after one warm-up each, and the ratio (target <= 1.5).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import SparkSession

from dagster_streamt.checks.runner import run_test
from dagster_streamt.spec.models import Test

STATUSES = ["paid", "shipped", "pending", "cancelled"]
ASSERTIONS: list[dict] = [
    {"not_null": {"columns": ["id", "customer_id", "status"]}},
    {"not_null": {"columns": ["email"]}},  # fails: 1% nulls, so run_test also fetches a sample
    {"unique": {"columns": ["id"]}},
    {"accepted_values": {"column": "status", "values": STATUSES}},
    {"accepted_values": {"column": "qty", "values": list(range(10)), "quote": False}},
    {"range": {"column": "amount", "min": 0, "max": 1500}},
    {"range": {"column": "qty", "min": 0, "max": 9}},
    {"relationships": {"column": "customer_id", "to": 'ref("customers")', "field": "id"}},
    {"row_count": {"min": 1}},
    {"freshness": {"column": "ts", "max_age": "3650d"}},
    {"custom_sql": {"where": "amount < 0"}},
    {"custom_sql": {"sql": "SELECT count(*) FROM {{ this }} WHERE qty > 100", "expect": 0}},
    {"expression_is_true": {"expression": "amount >= 0"}},
    {"expression_is_true": {"expression": "qty * amount >= 0"}},
    {"distribution": {"column": "status", "buckets": [{"value": s, "expected_ratio": 0.25} for s in STATUSES]}},
    {"distribution": {"column": "amount", "buckets": [{"min": 0, "max": 750, "expected_ratio": 0.5},
                                                      {"min": 750, "expected_ratio": 0.5}]}},
    {"accepted_types": {"types": {"id": "bigint", "amount": "double", "ts": "timestamp", "qty": "int"}}},
    {"not_null": {"columns": ["ts", "amount", "qty"]}},
    {"range": {"column": "ts", "min": datetime(2024, 1, 1)}},
    {"accepted_values": {"column": "country", "values": ["FR", "DE", "US"]}},
]

HAND_WRITTEN = """
SELECT
  count(*),
  count_if(id IS NULL OR customer_id IS NULL OR status IS NULL),
  count_if(email IS NULL),
  count_if(id IS NOT NULL) - count(DISTINCT id),
  count_if(status NOT IN ('paid', 'shipped', 'pending', 'cancelled')),
  count_if(qty NOT IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)),
  count_if(amount < 0 OR amount > 1500),
  count_if(qty < 0 OR qty > 9),
  count_if(o.customer_id IS NOT NULL AND c.cid IS NULL),
  max(ts),
  count_if(amount < 0),
  (SELECT count(*) FROM orders WHERE qty > 100),
  count_if(NOT coalesce(amount >= 0, false)),
  count_if(NOT coalesce(qty * amount >= 0, false)),
  count_if(status = 'paid'), count_if(status = 'shipped'), count_if(status = 'pending'),
  count_if(status = 'cancelled'), count(status),
  count_if(amount >= 0 AND amount < 750), count_if(amount >= 750), count(amount),
  count_if(ts IS NULL OR amount IS NULL OR qty IS NULL),
  count_if(ts < TIMESTAMP '2024-01-01 00:00:00'),
  count_if(country NOT IN ('FR', 'DE', 'US'))
FROM orders o LEFT JOIN (SELECT DISTINCT id AS cid FROM customers) c ON o.customer_id = c.cid
"""


def generate(spark: SparkSession, rows: int, folder: Path) -> None:
    spark.range(rows).selectExpr(
        "id", "id % 50000 AS customer_id",
        "element_at(array('paid', 'shipped', 'pending', 'cancelled'), CAST(id % 4 + 1 AS INT)) AS status",
        "CAST(id % 1000 AS DOUBLE) * 1.5 AS amount", "CAST(id % 10 AS INT) AS qty",
        "timestamp_seconds(1704067200 + id) AS ts",
        "CASE WHEN id % 100 = 0 THEN NULL ELSE concat('u', id, '@example.com') END AS email",
        "element_at(array('FR', 'DE', 'US'), CAST(id % 3 + 1 AS INT)) AS country",
    ).write.mode("overwrite").parquet(str(folder / "orders"))
    spark.range(50000).write.mode("overwrite").parquet(str(folder / "customers"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    test = Test(name="bench", model="orders", assertions=ASSERTIONS)
    with tempfile.TemporaryDirectory(prefix="bench_assertions_") as tmp:
        folder = Path(tmp)
        generate(spark, args.rows, folder)
        spark.read.parquet(str(folder / "orders")).createOrReplaceTempView("orders")
        spark.read.parquet(str(folder / "customers")).createOrReplaceTempView("customers")
        now = datetime(2024, 6, 1, tzinfo=UTC)

        def engine() -> float:
            start = time.perf_counter()
            result = run_test(spark, test, "`orders`", now=now)
            elapsed = time.perf_counter() - start
            failed = [a.label for a in result.assertions if not a.passed]
            assert failed == ["not_null_2"], [(a.label, a.message, a.error) for a in result.assertions if not a.passed]
            return elapsed

        def hand() -> float:
            start = time.perf_counter()
            row = spark.sql(HAND_WRITTEN).first()
            assert row is not None and row[0] == args.rows
            return time.perf_counter() - start

        engine(), hand()  # warm-up: file listing, code generation
        engine_times, hand_times = [], []
        for _ in range(args.repeat):
            engine_times.append(engine())
            hand_times.append(hand())
    e, h = statistics.median(engine_times), statistics.median(hand_times)
    print(f"rows={args.rows:,} assertions={len(ASSERTIONS)} repeat={args.repeat}")
    print(f"run_test (20 assertions): {e:.2f}s  (runs: {', '.join(f'{t:.2f}' for t in engine_times)})")
    print(f"hand-written query:       {h:.2f}s  (runs: {', '.join(f'{t:.2f}' for t in hand_times)})")
    print(f"ratio: {e / h:.2f}x (target <= 1.5)")


if __name__ == "__main__":
    main()
