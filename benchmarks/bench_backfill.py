"""Backfill of 30 daily partitions: one run for the range (the default, single-run backfill policy)
versus one run per partition (``--per-partition``), in the same script on the same data.

A scratch project holds ``--rows-per-day`` orders per day for 30 days (one JSON file per day) and
one partitioned table, ``daily_revenue`` (day partitions, filtered with ``{{ partition_start }}`` /
``{{ partition_end }}``). Each arm is one ``streamt backfill daily_revenue --from 2026-01-01 --to
2026-01-30`` process from fresh Dagster and warehouse state: the single run reads the source once and
writes the 30 partitions once; the per-partition arm makes 30 Dagster runs in that one process (one
JVM), each reading the source and writing one partition. Both arms write the same rows (checked).
Wall time from the outside, CPU seconds of the process tree; no assertions on timings.

    python benchmarks/bench_backfill.py                    # 30 days x 20,000 orders
    python benchmarks/bench_backfill.py --rows-per-day 2000
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import Table, count_outputs, machine_note, streamt_cmd, timed_run

DAYS = 30
PROJECT = """\
project: {name: backfill_bench}
sources:
  - name: orders
    format: json
    path: data/orders
    columns: [{name: order_id, type: bigint}, {name: country}, {name: amount, type: double},
              {name: ts, type: timestamp}]
models:
  - name: daily_revenue
    materialized: table
    partitioned_by: {column: order_day, granularity: day, start: 2026-01-01, end: 2026-01-31}
    sql: |
      SELECT CAST(date_trunc('DAY', ts) AS TIMESTAMP) AS order_day, country,
             count(*) AS orders, sum(amount) AS revenue
      FROM {{ source("orders") }}
      WHERE ts >= {{ partition_start }} AND ts < {{ partition_end }}
      GROUP BY 1, 2
"""


def write_project(root: Path, rows_per_day: int) -> None:
    (root / "data" / "orders").mkdir(parents=True, exist_ok=True)
    (root / "stream_project.yml").write_text(PROJECT, encoding="utf-8")
    rng = random.Random(7)
    countries = ["DE", "FR", "US", "JP", "BR", "IN"]
    start = datetime(2026, 1, 1)
    for day in range(DAYS):
        with (root / "data" / "orders" / f"orders-{day + 1:02d}.json").open("w", encoding="utf-8") as fh:
            for i in range(rows_per_day):
                ts = start + timedelta(days=day, seconds=int(i * 86400 / rows_per_day))
                fh.write(json.dumps({"order_id": day * 10_000_000 + i, "country": rng.choice(countries),
                                     "amount": round(rng.uniform(1, 500), 2),
                                     "ts": ts.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n")


def reset(root: Path) -> None:
    shutil.rmtree(root / ".streamt", ignore_errors=True)
    shutil.rmtree(root / "target", ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows-per-day", type=int, default=20_000)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="streamt-backfill-"))).resolve()
    root = work / "project"
    print(f"workdir {work}\n{machine_note()}")
    write_project(root, args.rows_per_day)
    print(f"{DAYS} days x {args.rows_per_day:,} orders written", flush=True)
    base = [*streamt_cmd(), "backfill", "daily_revenue", "-p", str(root), "--from", "2026-01-01",
            "--to", f"2026-01-{DAYS:02d}"]
    table = Table(["arm", "runs", "wall s", "cpu s", "rows"])
    results = {}
    for arm, extra in (("single run (30 partitions)", []), ("one run per partition", ["--per-partition"])):
        reset(root)
        print(f"running: {arm} ...", flush=True)
        timed = timed_run([*base, *extra])
        runs = timed.stdout.count("model(s) succeeded")
        rows = count_outputs({"daily_revenue": root / ".streamt" / "warehouse" / "daily_revenue" / "data"})
        results[arm] = (timed, runs, rows["daily_revenue"])
        table.add(arm, runs, f"{timed.seconds:.1f}", f"{timed.cpu_seconds:.1f}", rows["daily_revenue"])
    print()
    print(table.render())
    (single, _, rows_a), (multi, _, rows_b) = results.values()
    print(f"\nsame rows in both arms: {rows_a == rows_b} ({rows_a:,})")
    print(f"per-partition / single-run: wall {multi.seconds / single.seconds:.1f}x, "
          f"cpu {multi.cpu_seconds / max(single.cpu_seconds, 1e-9):.1f}x (target: single run >= 5x faster)")
    return 0 if rows_a == rows_b else 1


if __name__ == "__main__":
    raise SystemExit(main())
