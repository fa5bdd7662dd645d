"""Incremental runs: does a rerun after 1% new orders cost in proportion to the new data?

In one run of this script, on a scratch copy of the example project (tests left out unless
``--with-tests``) with ``--orders-total`` orders in ``--files`` files:

1. full run: ``streamt run -p COPY`` from fresh state (the baseline);
2. rerun of the stream models with no new data: ``streamt run -p COPY -s materialized:stream``
   (the fixed cost of a rerun);
3. 1% new orders appended (``generate.py --append``, one file of orders-total/100 orders), then
   ``streamt run -p COPY -s materialized:stream``;
4. another 1% appended, then the whole pipeline: ``streamt run -p COPY``.

Each rerun is printed against the full run (time ratio), with the rows each stream model processed
(from ``streamt run``'s summary table). Wall time of the whole process from the outside, CPU seconds
and peak RSS of the process tree. No assertions on timings.

    python benchmarks/bench_incremental.py                                  # 2,000,000 orders
    python benchmarks/bench_incremental.py --orders-total 100000 --files 2  # quick check
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import (
    Table,
    Timed,
    copy_project,
    generate,
    load_avg,
    machine_note,
    parse_summary,
    reset_state,
    run_total,
    streamt_cmd,
    timed_run,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--orders-total", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--customers", type=int, default=2000)
    ap.add_argument("--append-percent", type=float, default=1.0)
    ap.add_argument("--with-tests", action="store_true", help="keep the project's data tests (asset checks)")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="streamt-incr-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"workdir {work}\n{machine_note()}")
    project = copy_project(work / "shop", with_tests=args.with_tests)
    per_file = max(1, args.orders_total // args.files)
    new_orders = max(1, int(args.orders_total * args.append_percent / 100))
    print(f"generating {per_file * args.files:,} orders in {args.files} file(s) ...", flush=True)
    print("  " + generate(project / "data", per_file, args.files, args.customers), flush=True)
    run = [*streamt_cmd(), "run", "-p", str(project)]
    streams = [*run, "-s", "materialized:stream"]
    results: list[tuple[str, Timed]] = []

    def step(label: str, cmd: list[str]) -> Timed:
        before = load_avg()
        t = timed_run(cmd, cwd=work)
        results.append((label, t))
        summary = parse_summary(t.stdout)
        rows = ", ".join(f"{m} {v['rows'] if v['rows'] is not None else 'view'} rows/{v['seconds']} s"
                         for m, v in summary.items())
        print(f"  {label:<44} {t.seconds:7.1f} s  CPU {t.cpu_seconds:6.1f} s  peak RSS {t.peak_mb:5.0f} MB  "
              f"[{before}]  (Dagster run {run_total(t.stdout)} s: {rows})", flush=True)
        return t

    print("\n== runs")
    reset_state(project)
    full = step("1. full run (fresh state)", run)
    step("2. streams rerun, no new data", streams)
    print("  " + generate(project / "data", new_orders, 1, args.customers, append=True), flush=True)
    step(f"3. streams rerun after +{args.append_percent:g}% orders", streams)
    print("  " + generate(project / "data", new_orders, 1, args.customers, append=True), flush=True)
    step(f"4. whole pipeline after another +{args.append_percent:g}%", run)

    full_rows = parse_summary(full.stdout)
    print(f"\n== against the full run ({full.seconds:.1f} s wall, {full.cpu_seconds:.1f} s CPU)")
    t = Table(["run", "wall s", "wall ratio", "CPU s", "CPU ratio", *[f"{m} rows" for m in
                                                                       ("orders_clean", "order_metrics",
                                                                        "orders_export", "customer_orders")]])
    for label, r in results:
        summary = parse_summary(r.stdout)
        cells = []
        for m in ("orders_clean", "order_metrics", "orders_export", "customer_orders"):
            v = summary.get(m)
            cells.append("-" if v is None or v["rows"] is None else f"{v['rows']:,}")
        t.add(label, f"{r.seconds:.1f}", f"{r.seconds / full.seconds:.2f}", f"{r.cpu_seconds:.1f}",
              f"{r.cpu_seconds / full.cpu_seconds:.2f}" if full.cpu_seconds else "-", *cells)
    print("\n".join("  " + line for line in t.render().splitlines()))
    per_model = Table(["model", "full run s", *[label.split(".")[0] + ". s" for label, _ in results[1:]]])
    for m in full_rows:
        per_model.add(m, full_rows[m]["seconds"],
                      *[parse_summary(r.stdout).get(m, {}).get("seconds", "-") for _, r in results[1:]])
    print("\n  seconds per model (streamt run's summary)")
    print("\n".join("  " + line for line in per_model.render().splitlines()))
    share = new_orders / (per_file * args.files)
    print(f"\n  new data per rerun: {new_orders:,} orders = {share:.1%} of the full run's input; a rerun in "
          f"proportion would cost fixed start-up + {share:.1%} of the full run's data work")
    return 0


if __name__ == "__main__":
    sys.exit(main())
