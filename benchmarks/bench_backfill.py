"""Backfill of 30 daily partitions: one run for the range (the default, single-run backfill policy)
versus one run per partition (``--per-partition``), in the same script on the same data.

A scratch project holds ``--rows-per-day`` orders per day for 30 days (one JSON file per day) and
one partitioned table, ``daily_revenue`` (day partitions, filtered with ``{{ partition_start }}`` /
``{{ partition_end }}``). Each arm is one ``streamt backfill daily_revenue --from 2026-01-01 --to
2026-01-30`` process from fresh Dagster and warehouse state: the single run reads the source once and
writes the 30 partitions once; the per-partition arm makes 30 Dagster runs in that one process (one
JVM), each reading the source and writing one partition. Both arms write the same rows (checked).
Wall time from the outside, CPU seconds of the process tree; no assertions on timings.

Each process pays ~20 s before the first row is read (Python and Dagster imports, the JVM start, and
the first Spark queries of a fresh JVM, which run several times slower than later ones), so the
process-level ratio depends on the data size. A second comparison isolates the backfill policy: in
one process with a warmed-up Spark session, the 30-partition range as one Dagster run versus 30
Dagster runs of one partition (each arm from an empty warehouse, same session).

``--connect PORT`` runs the Spark work of both process arms on a local Spark Connect server (started
and warmed up before timing, stopped at the end), the setup that keeps a warm JVM across processes.
The server is not a child of the timed process: its CPU is not in the CPU column, compare wall times.

    python benchmarks/bench_backfill.py                    # 30 days x 20,000 orders
    python benchmarks/bench_backfill.py --rows-per-day 2000
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
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
    partitioned_by: {column: order_day, granularity: day, start: 2026-01-01, end: 2026-02-01}
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


WARM = """
import json, shutil, sys, time
from pathlib import Path
import dagster as dg
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.resources import SparkResource

root = Path(sys.argv[1])
defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
job = defs.resolve_implicit_global_asset_job_def()
keys = [dg.AssetKey("daily_revenue")]
days = [f"2026-01-{d:02d}" for d in range(1, 31)]
out = {}
with dg.instance_for_test() as instance:
    def run(**kw):
        result = job.execute_in_process(instance=instance, asset_selection=keys, raise_on_error=False, **kw)
        assert result.success
    run(partition_key="2026-01-31")  # warm-up: JVM, codegen, file cache (a partition outside the range)
    for arm in ("single", "per_partition"):
        shutil.rmtree(root / ".streamt" / "warehouse", ignore_errors=True)
        start = time.perf_counter()
        if arm == "single":
            run(tags={"dagster/asset_partition_range_start": days[0], "dagster/asset_partition_range_end": days[-1]})
        else:
            for day in days:
                run(partition_key=day)
        out[arm] = time.perf_counter() - start
print("WARM " + json.dumps(out))
"""


def warm_comparison(root: Path) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", WARM, str(root)], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("WARM "):
            return json.loads(line[5:])
    raise SystemExit(f"warm comparison failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def reset(root: Path) -> None:
    """Fresh Dagster and warehouse state; a running Spark Connect server's pid and logs stay."""
    state = root / ".streamt"
    for child in state.iterdir() if state.is_dir() else ():
        if child.name != "connect-server":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.rmtree(root / "target", ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows-per-day", type=int, default=20_000)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--warm-only", action="store_true", help="only the comparison in one warmed-up process")
    ap.add_argument("--connect", type=int, default=0, metavar="PORT",
                    help="run the Spark work on a local Spark Connect server on PORT (started and warmed up "
                         "first, stopped at the end): processes connect instead of starting a JVM")
    args = ap.parse_args()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="streamt-backfill-"))).resolve()
    root = work / "project"
    print(f"workdir {work}\n{machine_note()}")
    write_project(root, args.rows_per_day)
    if args.connect:
        with (root / "stream_project.yml").open("a", encoding="utf-8") as fh:
            fh.write(f"runtime: {{spark: {{connect_server: {{start: true, port: {args.connect}}}}}}}\n")
    print(f"{DAYS} days x {args.rows_per_day:,} orders written", flush=True)
    if args.warm_only:
        return print_warm(root)
    if args.connect:
        print(f"starting and warming up a Spark Connect server on port {args.connect} ...", flush=True)
        timed_run([*streamt_cmd(), "backfill", "daily_revenue", "-p", str(root), "--from", "2026-01-31",
                   "--to", "2026-01-31"])
        try:
            return compare_processes(root)
        finally:
            subprocess.run([sys.executable, "-c", STOP, str(root)], capture_output=True)
    return compare_processes(root, warm=True)


STOP = """
import sys
from pathlib import Path
from dagster_streamt.spark.session.project_server import stop_project_server
from dagster_streamt.spec.loader import load_project
stop_project_server(load_project(Path(sys.argv[1]))[0])
"""


def compare_processes(root: Path, warm: bool = False) -> int:
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
    print(f"per-partition / single-run, whole processes: wall {multi.seconds / single.seconds:.1f}x, "
          f"cpu {multi.cpu_seconds / max(single.cpu_seconds, 1e-9):.1f}x (target: single run >= 5x faster)")
    if warm:
        print_warm(root)
    return 0 if rows_a == rows_b else 1


def print_warm(root: Path) -> int:
    reset(root)
    print("\nrunning: both arms in one process, warmed-up Spark session ...", flush=True)
    warm = warm_comparison(root)
    print(f"warm session: single run {warm['single']:.1f} s, 30 runs {warm['per_partition']:.1f} s, "
          f"ratio {warm['per_partition'] / warm['single']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
