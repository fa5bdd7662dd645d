"""Warm a freshly started project server before the next run needs it.

A new JVM runs its first queries several times slower than later ones: the JSON parser, the
Parquet writer, joins and aggregations are still interpreted until the JIT compiles them. A run
that connects to a new server would pay that; so ``streamt server start`` runs a small built-in
project through the server it started before returning, with dagster-streamt's own materializers: synthetic
orders written as JSON, then a full build (corrupt records found in the scan, a filter, a join, a
window aggregation, a distinct count, each kept with its refresh record) and incremental refreshes
after new files arrive (appends, merged aggregation states). Those are the paths the next runs
take. It writes only under the server's state folder and deletes what it wrote; ``warm`` records
when it finished.

``runtime.spark.connect_server.warmup``: ``quick`` (the default: one build of the first model over
1,000 orders, the JSON scan with corrupt records and the Parquet write every run starts with; about
9 s of CPU, the first run then 0.8x as long: ``benchmarks/bench_server_warmup.py`` measures it),
``full`` (a full build, a rebuild and a dozen refreshes, about 50 s of both cores here: the JIT
warm too) or ``off`` (nothing run: the first runs on a new server are slower).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

ROWS = 100_000  # orders of each full build; each refresh adds ROWS // 50
FILES = 4
# The JIT compiles what runs often: the planner's and writer's code runs per query, not per row, so
# many small refreshes warm more of a run's path than a few big builds.
ROUNDS = ("full", *["refresh"] * 6, "rebuild", *["refresh"] * 6)
QUICK_ROUNDS = ("full",)
QUICK_ROWS = 1_000


def rounds(mode: str) -> tuple[tuple[str, ...], int]:
    """The warm-up's rounds and rows per build for ``connect_server.warmup``."""
    if mode == "off":
        return (), 0
    return (QUICK_ROUNDS, QUICK_ROWS) if mode == "quick" else (ROUNDS, ROWS)
PROJECT = """\
project: {name: streamt_warm_up, version: "1"}
runtime:
  spark: {warehouse: wh, checkpoints: ck, connect_server: false}
sources:
  - name: orders_raw
    format: json
    path: raw
    columns:
      - {name: order_id, type: bigint}
      - {name: customer_id, type: bigint}
      - {name: amount, type: double}
      - {name: status, type: string}
      - {name: ts, type: string}
      - {name: country, type: string}
  - name: customers_raw
    format: json
    path: dim
    columns:
      - {name: customer_id, type: bigint}
      - {name: tier, type: string}
models:
  - name: clean
    sql: |
      SELECT order_id, customer_id, amount, CAST(ts AS TIMESTAMP) AS ts, country
      FROM {{ source("orders_raw") }} WHERE amount > 0 AND status <> 'cancelled'
  - name: joined
    sql: |
      SELECT o.order_id, o.customer_id, o.amount, o.ts, c.tier
      FROM {{ ref("clean") }} o JOIN {{ source("customers_raw") }} c ON o.customer_id = c.customer_id
  - name: windows
    sql: |
      SELECT country, window.start AS window_start, count(*) AS n, sum(amount) AS total, avg(amount) AS mean
      FROM {{ ref("clean") }} GROUP BY country, window(ts, '1 hour')
  - name: tiers
    sql: |
      SELECT tier, sum(amount) AS revenue, count(DISTINCT customer_id) AS customers
      FROM {{ ref("joined") }} GROUP BY tier
"""
MODELS = ["clean", "joined", "windows", "tiers"]
LEVELS = [["clean"], ["joined", "windows"], ["tiers"]]
UPSTREAM = {"clean": set(), "joined": {"clean"}, "windows": {"clean"}, "tiers": {"joined"}}


def _orders(spark: object, first: int, rows: int, files: int, folder: Path) -> None:
    """``rows`` synthetic orders from id ``first`` as JSON lines, a few of them malformed."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    df: DataFrame = spark.range(first, first + rows, numPartitions=files).selectExpr(  # type: ignore[attr-defined]
        "id AS order_id", "id % 20000 AS customer_id", "CAST(id % 997 AS DOUBLE) / 10 AS amount",
        "IF(id % 11 = 0, 'cancelled', 'completed') AS status",
        "CAST(timestamp_seconds(1700000000 + id * 7) AS STRING) AS ts",
        "element_at(array('FR', 'DE', 'ES', 'IT'), CAST(id % 4 + 1 AS INT)) AS country")
    lines = df.select(F.when(F.col("order_id") % 997 == 0, F.lit("{not json"))
                      .otherwise(F.to_json(F.struct("*"))).alias("value"))
    lines.write.mode("append").text(str(folder))


def warm_up(url: str, folder: Path, mode: str = "quick") -> str | None:
    """Run the warm-up; ``warm`` is written when it is over, whether it worked or not. Returns why it
    failed (a bug of ours: the server itself works, only colder), or None."""
    todo, rows = rounds(mode)
    try:
        if todo:
            _run(url, folder, todo, rows)
    except Exception as exc:  # reported; the server stays usable
        return f"{type(exc).__name__}: {exc}"
    finally:
        (folder / "warm").write_text(time.strftime("%Y-%m-%dT%H:%M:%S"), encoding="utf-8")
    return None


def _run(url: str, folder: Path, todo: tuple[str, ...], full_rows: int) -> None:
    from pyspark.sql import SparkSession

    from ..spec.loader import load_project
    from .runner import run_models

    spark = SparkSession.builder.remote(url).getOrCreate()
    scratch = folder / "warm-up"
    try:
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        (scratch / "stream_project.yml").write_text(PROJECT, encoding="utf-8")
        quick = len(todo) == 1  # one build of the first model: the scan of a source every run starts with
        if not quick:
            spark.range(20000).selectExpr("id AS customer_id", "IF(id % 3 = 0, 'gold', 'silver') AS tier") \
                .write.json(str(scratch / "dim"))
        project, _ = load_project(scratch)
        if project is None:
            raise RuntimeError("the warm-up project does not load")
        first = 0
        for kind in todo:
            rows = full_rows if kind != "refresh" else full_rows // 50
            _orders(spark, first, rows, 1 if quick or kind == "refresh" else FILES, scratch / "raw")
            first += rows
            refresh = set(MODELS) if kind == "rebuild" else set()
            models = MODELS[:1] if quick else MODELS
            failed = [r for r in run_models(spark, project, models, LEVELS, UPSTREAM, refresh) if not r.ok]
            if failed:
                raise RuntimeError(f"warm-up model {failed[0].model} failed: {failed[0].error}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        spark.stop()
