"""Kafka latency and throughput on a real broker (issue 24, item 7).

Latency: end to end, from the moment a record is handed to the producer (``sent_ms`` in its JSON
payload) to the broker's append of the output record (the output topic has
``message.timestamp.type=LogAppendTime``, so the record's Kafka timestamp is the append time), for a
Kafka -> filter -> Kafka model fed ``--latency-records`` records at ``--rate`` records/s, p50/p99:

* ``real-time``: the model with ``advanced.spark.trigger: real_time`` under ``streamt run --continuous``
  (Spark's Real-time Mode, straight from the source topic to the model's topic);
* ``micro-batch``: the same query with the processing-time trigger of continuous mode's default
  (5 seconds), Kafka to Kafka, hand-written in PySpark (``streamt run --continuous`` writes a micro-batch
  model's warehouse output, not its topic, so there is no product path to time for it).

Throughput, records/s over one run each (wall time of the whole process, JVM start included, for both):
``streamt run`` of a Kafka -> filter -> Kafka stream model (warehouse output, then the topic) and of a
Kafka -> tumbling-window aggregation -> table model, against the same jobs hand-written in PySpark
(Kafka -> filter -> Kafka in one query; Kafka batch read -> window aggregation -> Parquet).

Run (the broker and Spark both start: hold the machine's Spark lock)::

    flock /tmp/spark.lock python3 benchmarks/bench_kafka_latency.py --records 20000 --latency-records 300
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dagster_streamt.kafka import admin  # noqa: E402
from dagster_streamt.kafka.broker import start_broker  # noqa: E402
from tests.kafka.topics import read_messages  # noqa: E402

LOG_APPEND = {"message.timestamp.type": "LogAppendTime"}
SCHEMA = "order_id STRING, customer_id STRING, amount DOUBLE, ts TIMESTAMP, sent_ms BIGINT"
FILTER_SQL = "SELECT order_id, customer_id, amount, ts, sent_ms FROM {src} WHERE amount > 100"
MICRO_BATCH = "5 seconds"  # dagster_streamt.spark.streams.continuous.DEFAULT_TRIGGER

PROJECT = """\
project:
  name: bench_kafka
runtime:
  kafka:
    bootstrap_servers: {servers}
sources:
  - name: orders
    topic: {topic}
    columns:
      - {{name: order_id, type: STRING}}
      - {{name: customer_id, type: STRING}}
      - {{name: amount, type: DOUBLE}}
      - {{name: ts, type: TIMESTAMP}}
      - {{name: sent_ms, type: BIGINT}}
models:
  - name: big_orders
    materialized: stream
    advanced:
      topic:
        name: {out}
        config: {{message.timestamp.type: LogAppendTime}}
{trigger}    sql: |
      SELECT order_id, customer_id, amount, ts, sent_ms FROM {{{{ source("orders") }}}} WHERE amount > 100
  - name: totals
    materialized: table
    sql: |
      SELECT customer_id, TUMBLE_END(ts, INTERVAL '1' MINUTE) AS window_end, SUM(amount) AS total,
             COUNT(*) AS n
      FROM {{{{ source("orders") }}}}
      GROUP BY customer_id, TUMBLE(ts, INTERVAL '1' MINUTE)
"""


def record(i: int, sent_ms: int | None = None) -> dict[str, Any]:
    ts = 1_767_261_600 + i  # 2026-01-01T10:00:00Z + i s
    return {"order_id": f"o{i:07d}", "customer_id": f"c{i % 50}", "amount": float(37 * i % 250),
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)),
            "sent_ms": sent_ms if sent_ms is not None else 0}


def write_project(root: Path, servers: str, topic: str, out: str, real_time: bool) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    trigger = "      spark:\n        trigger: real_time 1 minute\n" if real_time else ""
    text = PROJECT.format(servers=servers, topic=topic, out=out, trigger=trigger)
    (root / "stream_project.yml").write_text(text, encoding="utf-8")
    home = root.parent / f"{root.name}_dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return home


# -- hand-written PySpark jobs (run as `python bench_kafka_latency.py handwritten ...`) -----------------
def _session(name: str) -> Any:
    from pyspark.sql import SparkSession

    from dagster_streamt.jars import sets
    from dagster_streamt.jars.fetch import jars_for
    from dagster_streamt.spark.session.session_jars import with_jars

    conf = with_jars({"spark.master": "local[*]", "spark.ui.enabled": "false",
                      "spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC"}, jars_for(sets.kafka()))
    builder = SparkSession.builder.appName(name)
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _parsed(df: Any) -> Any:
    from pyspark.sql import functions as F

    return df.select(F.from_json(F.col("value").cast("string"), SCHEMA).alias("r")).select("r.*")


def handwritten(job: str, servers: str, topic: str, out: str, work: str) -> None:
    from pyspark.sql import functions as F

    spark = _session(f"handwritten-{job}")
    if job == "window":
        df = _parsed(spark.read.format("kafka").option("kafka.bootstrap.servers", servers)
                     .option("subscribe", topic).load())
        result = (df.groupBy("customer_id", F.window("ts", "1 minute"))
                  .agg(F.sum("amount").alias("total"), F.count(F.lit(1)).alias("n"))
                  .select("customer_id", F.col("window.end").alias("window_end"), "total", "n"))
        result.write.mode("overwrite").parquet(str(Path(work) / "totals"))
        return
    stream = _parsed(spark.readStream.format("kafka").option("kafka.bootstrap.servers", servers)
                     .option("subscribe", topic).option("startingOffsets", "earliest").load())
    filtered = stream.where(F.col("amount") > 100)
    value = filtered.select(F.col("order_id").alias("key"), F.to_json(F.struct(*filtered.columns)).alias("value"))
    writer = (value.writeStream.format("kafka").option("kafka.bootstrap.servers", servers).option("topic", out)
              .option("checkpointLocation", str(Path(work) / f"checkpoint-{job}")))
    if job == "filter":
        writer.trigger(availableNow=True).start().awaitTermination()
        return
    trigger = {"realTime": "1 minute"} if job == "real-time" else {"processingTime": MICRO_BATCH}
    query = writer.outputMode("update").trigger(**trigger).start()
    print("STARTED", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.is_set() and query.isActive:
        stop.wait(0.2)
    query.stop()


# -- measuring ------------------------------------------------------------------------------------------
def produce_all(servers: str, topic: str, count: int) -> None:
    admin.produce(servers, topic, ((r["order_id"], json.dumps(r)) for r in map(record, range(count))), timeout=120)


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return took


def _consumer(servers: str, topic: str) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"bench-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    return consumer


def latency(servers: str, cmd: list[str], env: dict[str, str], topic: str, out: str, records: int,
            rate: float, log: Path) -> dict[str, Any]:
    """Start ``cmd`` (a continuous job from ``topic`` to ``out``), wait until a warm-up record comes
    through, then produce ``records`` at ``rate``/s and time each one's trip (LogAppendTime - sent_ms)."""
    from confluent_kafka import Producer

    admin.create_topic(servers, topic, 1, 1, exist_ok=True)
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 0, "acks": 1})
    with log.open("w") as sink:
        proc = subprocess.Popen(cmd, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 300
            while out not in admin.list_topics(servers) and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.5)
            if out not in admin.list_topics(servers):
                admin.create_topic(servers, out, 1, 1, LOG_APPEND, exist_ok=True)
            consumer = _consumer(servers, out)
            warm = 0
            while time.monotonic() < deadline and proc.poll() is None:  # until a record makes the trip
                r = record(10_000_000 + warm, int(time.time() * 1000))
                r["amount"] = 200.0
                producer.produce(topic, json.dumps(r), key=r["order_id"])
                producer.flush()
                warm += 1
                msg = consumer.poll(2.0)
                if msg is not None and msg.error() is None:
                    break
            else:
                raise SystemExit(f"no output from {' '.join(cmd)}:\n{log.read_text()[-3000:]}")
            time.sleep(2.0)
            while consumer.poll(0.5) is not None:  # drain the warm-up records
                pass
            interval, start = 1.0 / rate, time.perf_counter()
            for i in range(records):
                target = start + i * interval
                while (now := time.perf_counter()) < target:
                    time.sleep(min(target - now, 0.005))
                r = record(i, int(time.time() * 1000))
                r["amount"] = 200.0  # every latency record passes the filter
                producer.produce(topic, json.dumps(r), key=r["order_id"])
                producer.poll(0)
            producer.flush()
            trips: list[float] = []
            end = time.monotonic() + 120
            while len(trips) < records and time.monotonic() < end:
                msg = consumer.poll(1.0)
                if msg is None or msg.error() is not None:
                    continue
                value = json.loads(msg.value())
                if value["order_id"] < "o1":  # not a warm-up record
                    trips.append(msg.timestamp()[1] - value["sent_ms"])
            consumer.close()
        finally:
            proc.send_signal(signal.SIGINT if cmd[1:3] == ["-m", "dagster_streamt.cli"] else signal.SIGTERM)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    trips.sort()
    return {"records": len(trips), "p50_ms": statistics.median(trips) if trips else None,
            "p99_ms": trips[min(len(trips) - 1, int(0.99 * len(trips)))] if trips else None,
            "max_ms": trips[-1] if trips else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000, help="records for the throughput runs")
    parser.add_argument("--latency-records", type=int, default=300)
    parser.add_argument("--rate", type=float, default=50.0, help="records/s produced in the latency runs")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-kafka-"))
    broker = start_broker(work / "kafka")
    servers = broker.bootstrap_servers
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    me = [sys.executable, str(Path(__file__).resolve()), "handwritten"]
    streamt = [sys.executable, "-m", "dagster_streamt.cli", "run", "-p"]
    figures: dict[str, Any] = {"records": args.records, "latency_records": args.latency_records, "rate": args.rate}
    try:
        if not args.skip_latency:
            home = write_project(work / "rt", servers, "lat_rt_in", "lat_rt_out", real_time=True)
            figures["latency_real_time_streamt"] = latency(
                servers, [*streamt, str(work / "rt"), "--continuous", "-s", "big_orders"],
                {**env, "DAGSTER_HOME": str(home)}, "lat_rt_in", "lat_rt_out", args.latency_records, args.rate,
                work / "rt.log")
            admin.create_topic(servers, "lat_mb_out", 1, 1, LOG_APPEND)
            figures["latency_micro_batch_5s"] = latency(
                servers, [*me, "micro-batch", servers, "lat_mb_in", "lat_mb_out", str(work)], env,
                "lat_mb_in", "lat_mb_out", args.latency_records, args.rate, work / "mb.log")
            rt, mb = figures["latency_real_time_streamt"], figures["latency_micro_batch_5s"]
            if rt["p50_ms"] and mb["p50_ms"]:
                figures["latency_p50_ratio_micro_batch_over_real_time"] = mb["p50_ms"] / rt["p50_ms"]
                figures["latency_p99_ratio_micro_batch_over_real_time"] = mb["p99_ms"] / rt["p99_ms"]
        if not args.skip_throughput:
            admin.create_topic(servers, "tp_in", 2, 1)
            produce_all(servers, "tp_in", args.records)
            home = write_project(work / "tp", servers, "tp_in", "tp_out", real_time=False)
            tenv = {**env, "DAGSTER_HOME": str(home)}
            filt = timed([*streamt, str(work / "tp"), "-s", "big_orders"], tenv)
            admin.create_topic(servers, "tp_hand_out", 2, 1)
            hand_filt = timed([*me, "filter", servers, "tp_in", "tp_hand_out", str(work)], env)
            window = timed([*streamt, str(work / "tp"), "-s", "totals"], tenv)
            hand_window = timed([*me, "window", servers, "tp_in", "-", str(work)], env)
            # records, not end offsets: a transaction's commit marker takes an offset too
            out_rows = len(read_messages(servers, "tp_out"))
            hand_rows = len(read_messages(servers, "tp_hand_out"))
            figures["throughput"] = {
                "filter_to_topic": {"streamt_s": filt, "handwritten_s": hand_filt,
                                    "streamt_rps": args.records / filt, "handwritten_rps": args.records / hand_filt,
                                    "ratio_streamt_over_handwritten_time": filt / hand_filt,
                                    "published": out_rows, "published_handwritten": hand_rows},
                "window_to_table": {"streamt_s": window, "handwritten_s": hand_window,
                                    "streamt_rps": args.records / window,
                                    "handwritten_rps": args.records / hand_window,
                                    "ratio_streamt_over_handwritten_time": window / hand_window}}
    finally:
        broker.stop()
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "handwritten":
        handwritten(*sys.argv[2:7])
    else:
        main()
