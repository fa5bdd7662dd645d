"""Delivery through ``kill -9`` at random points: Kafka topic -> stream model (its topic) -> Kafka sink.

Each round produces new records, starts ``streamt run`` as a user would (its own process group, JVM
included) and ``kill -9``s the group after a random delay drawn over a whole run's duration (measured
first by one run that is not killed); a last run is not killed. Then both output topics are read back
from the beginning, as a ``read_committed`` consumer (Flink's default, and our Kafka sources') and as a
``read_uncommitted`` one, and compared with the records expected: lost and duplicated records are
counted (the claim is 0 and 0 for ``read_committed``; ``read_uncommitted`` also sees aborted copies).

Run (the broker and Spark both start: hold the machine's Spark lock)::

    flock /tmp/spark.lock python3 benchmarks/bench_kafka_delivery.py --rounds 8
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dagster_streamt.kafka import admin  # noqa: E402
from dagster_streamt.kafka.broker import start_broker  # noqa: E402
from tests.kafka.topics import read_messages  # noqa: E402


def write_project(root: Path, servers: str, names: dict[str, str]) -> None:
    config = {
        "project": {"name": "delivery"},
        "runtime": {"kafka": {"bootstrap_servers": servers}},
        "sources": [{"name": "orders", "topic": names["raw"],
                     "columns": [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]}],
        "models": [
            {"name": "big", "materialized": "stream", "key": "order_id",
             "advanced": {"topic": {"name": names["big"], "partitions": 3}},
             "sql": 'SELECT order_id, amount FROM {{ source("orders") }} WHERE amount > 10'},
            {"name": "big_copy", "from": "big", "key": "order_id",
             "sink": {"format": "kafka", "options": {"topic": names["copy"]}}},
        ],
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def run(root: Path, home: Path, kill_after: float | None) -> tuple[float, bool]:
    """One ``streamt run``; killed (process group, ``kill -9``) after ``kill_after`` s if still running.
    Returns (seconds, killed)."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root)], cwd=REPO,
                            env={**os.environ, "DAGSTER_HOME": str(home)}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=kill_after)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return time.monotonic() - start, True
    if proc.returncode != 0:
        raise SystemExit(f"streamt run failed:\n{out[-3000:]}")
    return time.monotonic() - start, False


def ids(servers: str, topic: str, committed: bool) -> Counter[int]:
    if topic not in admin.list_topics(servers):
        return Counter()
    return Counter(json.loads(v)["order_id"] for _k, v in read_messages(servers, topic, committed=committed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="killed runs (each after new records)")
    parser.add_argument("--records", type=int, default=2000, help="records produced per round")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="bench-delivery-"))
    broker = start_broker(work / "kafka")
    try:
        servers, tag = broker.bootstrap_servers, uuid.uuid4().hex[:8]
        names = {"raw": f"orders.{tag}", "big": f"big.{tag}", "copy": f"copy.{tag}"}
        admin.create_topic(servers, names["raw"], partitions=3)
        root, home = work / "project", work / "dagster_home"
        home.mkdir()
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
        write_project(root, servers, names)
        produced = 0

        def produce() -> None:
            nonlocal produced
            batch = range(produced, produced + args.records)
            admin.produce(servers, names["raw"], [(str(i), json.dumps({"order_id": i, "amount": float(i % 20)}))
                                                  for i in batch])
            produced += args.records

        produce()
        full, _ = run(root, home, None)
        print(f"a whole run: {full:.1f} s; killing {args.rounds} runs at random points in [1 s, {full:.0f} s]")
        killed = 0
        for r in range(args.rounds):
            produce()
            delay = rng.uniform(1.0, full)
            took, was_killed = run(root, home, delay)
            killed += was_killed
            print(f"round {r + 1}: {'killed' if was_killed else 'finished'} after {took:.1f} s")
        run(root, home, None)
        want = Counter(i for i in range(produced) if i % 20 > 10)
        print(f"\n{produced} records produced, {sum(want.values())} expected in each output; "
              f"{killed} of {args.rounds} runs killed")
        print(f"{'output':<10} {'consumer':<18} {'records':>8} {'lost':>6} {'duplicates':>11}")
        for output in ("big", "copy"):
            for committed in (True, False):
                got = ids(servers, names[output], committed)
                lost, dupes = sum((want - got).values()), sum((got - want).values())
                level = "read_committed" if committed else "read_uncommitted"
                print(f"{output:<10} {level:<18} {sum(got.values()):>8} {lost:>6} {dupes:>11}")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
