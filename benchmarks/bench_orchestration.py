"""Orchestration overhead: the example pipeline run by ``streamt run`` (Dagster, in-process) versus the
same work hand-written as one PySpark script (``handwritten_pipeline.py``), in one run of this script.

1. Pipeline: the example project's YAML copied to a scratch folder (tests left out: the hand-written
   script runs none; ``--with-tests`` keeps them), ``--orders-total`` orders generated there in
   ``--files`` files. Then ``--runs`` rounds of (hand-written, ours), alternating, each from fresh
   state (``.streamt/``, ``target/``, ``exports/`` and the hand-written output deleted before each
   run). Wall time of the whole process measured from the outside, peak RSS of the process tree
   (python + Spark driver JVM). Prints every run, the medians and ours/hand (target <= 1.2), and
   the row counts both wrote (from their own reports and recounted from the files).
2. Per-model overhead: ``streamt run`` on a project with ``--trivial-models`` trivial table models
   (one 100-row CSV source; a chain of 10 plus fan-outs) vs the same project with 1 model, and the
   hand-written equivalent (``handwritten_trivial.py``, the same writes in one session) at both
   sizes. Overhead per model = (ours(N) - ours(1)) / (N - 1) - (hand(N) - hand(1)) / (N - 1)
   (target < 100 ms).

No assertions on timings: figures and ratios only.

    python benchmarks/bench_orchestration.py                       # 2,000,000 orders, 3 rounds
    python benchmarks/bench_orchestration.py --orders-total 100000 --runs 1 --trivial-runs 1   # quick
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import (
    Table,
    copy_project,
    count_outputs,
    generate,
    load_avg,
    machine_note,
    median,
    parse_summary,
    reset_state,
    run_total,
    streamt_cmd,
    timed_run,
    write_trivial_project,
)

HERE = Path(__file__).resolve().parent
HAND = HERE / "handwritten_pipeline.py"
HAND_TRIVIAL = HERE / "handwritten_trivial.py"
STREAM_MODELS = ("orders_clean", "order_metrics", "orders_export", "customer_orders")


def prepare_pipeline(work: Path, total: int, files: int, customers: int, with_tests: bool) -> Path:
    project = copy_project(work / "shop", with_tests=with_tests)
    per_file = max(1, total // files)
    print(f"generating {per_file * files:,} orders in {files} file(s), {customers:,} customers ...", flush=True)
    print("  " + generate(project / "data", per_file, files, customers), flush=True)
    return project


def hand_counts(stdout: str) -> dict[str, int]:
    for line in stdout.splitlines():
        if line.startswith("COUNTS "):
            return json.loads(line[len("COUNTS "):])
    return {}


def hand_phases(stdout: str) -> str:
    return next((line for line in stdout.splitlines() if line.startswith("phases:")), "")


def ours_paths(project: Path) -> dict[str, Path]:
    wh = project / ".streamt" / "warehouse"
    current = (wh / "customer_orders" / "_CURRENT").read_text().strip()
    return {"orders_clean": wh / "orders_clean" / "data", "order_metrics": wh / "order_metrics" / "data",
            "customer_orders": wh / "customer_orders" / current, "orders_export": project / "exports" / "orders",
            "orders_raw__quarantine": wh / "orders_raw__quarantine" / "data"}


def hand_paths(out: Path) -> dict[str, Path]:
    return {"orders_clean": out / "orders_clean", "order_metrics": out / "order_metrics",
            "customer_orders": out / "customer_orders", "orders_export": out / "exports" / "orders",
            "orders_raw__quarantine": out / "orders_raw__quarantine"}


def bench_pipeline(args: argparse.Namespace, work: Path) -> None:
    project = prepare_pipeline(work, args.orders_total, args.files, args.customers, args.with_tests)
    hand_out = work / "hand_out"
    hand_cmd = [sys.executable, str(HAND), "--data", str(project / "data"), "--out", str(hand_out)]
    ours_cmd = [*streamt_cmd(), "run", "-p", str(project)]
    hand_t: list[float] = []
    ours_t: list[float] = []
    hand_cpu: list[float] = []
    ours_cpu: list[float] = []
    last_hand = last_ours = None
    print(f"\n== pipeline: {args.orders_total:,} orders, {args.runs} round(s) of hand-written then streamt run "
          f"(fresh state each){' [with tests]' if args.with_tests else ''}")
    for i in range(1, args.runs + 1):
        reset_state(project)
        shutil.rmtree(hand_out, ignore_errors=True)
        before = load_avg()
        h = timed_run(hand_cmd, cwd=work)
        hand_t.append(h.seconds)
        hand_cpu.append(h.cpu_seconds)
        last_hand = h
        print(f"  round {i}  hand-written   {h.seconds:7.1f} s   CPU {h.cpu_seconds:6.1f} s   peak RSS "
              f"{h.peak_mb:6.0f} MB   [{before}]  ({hand_phases(h.stdout)})", flush=True)
        reset_state(project)
        before = load_avg()
        o = timed_run(ours_cmd, cwd=work)
        ours_t.append(o.seconds)
        ours_cpu.append(o.cpu_seconds)
        last_ours = o
        summary = parse_summary(o.stdout)
        per_model = ", ".join(f"{m} {v['seconds']}" for m, v in summary.items())
        print(f"  round {i}  streamt run    {o.seconds:7.1f} s   CPU {o.cpu_seconds:6.1f} s   peak RSS "
              f"{o.peak_mb:6.0f} MB   [{before}]  (Dagster run {run_total(o.stdout)} s; per model s: {per_model})",
              flush=True)
    mh, mo = median(hand_t), median(ours_t)
    ch, co = median(hand_cpu), median(ours_cpu)
    print(f"\n  median wall: hand-written {mh:.1f} s, streamt run {mo:.1f} s, ratio ours/hand {mo / mh:.2f} "
          f"(target <= 1.2)")
    print(f"  median CPU of the process tree: hand-written {ch:.1f} s, streamt run {co:.1f} s, ratio {co / ch:.2f}")
    if args.hand_two_queries:
        out2 = work / "hand_out_two_queries"
        shutil.rmtree(out2, ignore_errors=True)
        h2 = timed_run([sys.executable, str(HAND), "--data", str(project / "data"), "--out", str(out2),
                        "--quarantine", "two-queries"], cwd=work)
        print(f"  extra: hand-written with the quarantine as a second query (JSON parsed twice, like ours): "
              f"{h2.seconds:.1f} s, CPU {h2.cpu_seconds:.1f} s ({hand_phases(h2.stdout)}); "
              f"ours/that: wall {mo / h2.seconds:.2f}, CPU {co / h2.cpu_seconds:.2f}")
        print(f"    its counts: {hand_counts(h2.stdout)}")

    # -- same rows? ------------------------------------------------------------------------------
    assert last_hand is not None and last_ours is not None
    hc = hand_counts(last_hand.stdout)
    summary = parse_summary(last_ours.stdout)
    disk_o = count_outputs(ours_paths(project))
    disk_h = count_outputs(hand_paths(hand_out))
    t = Table(["output", "ours (summary)", "ours (files)", "hand (observed)", "hand (files)", "same"])
    for name in ("orders_clean", "order_metrics", "customer_orders", "orders_export", "orders_raw__quarantine"):
        s = summary.get(name, {}).get("rows", "-")
        same = disk_o.get(name) == disk_h.get(name)
        t.add(name, f"{s:,}" if isinstance(s, int) else s, f"{disk_o.get(name, 0):,}", f"{hc.get(name, 0):,}",
              f"{disk_h.get(name, 0):,}", "yes" if same else "NO")
    print("\n  row counts (last run of each)\n" + "\n".join("  " + line for line in t.render().splitlines()))


def bench_trivial(args: argparse.Namespace, work: Path) -> None:
    n = args.trivial_models
    big = write_trivial_project(work / f"trivial{n}", n)
    one = write_trivial_project(work / "trivial1", 1)
    print(f"\n== per-model overhead: {n} trivial table models vs 1 ({args.trivial_runs} round(s), fresh state each)")
    times: dict[str, list[float]] = {"hand1": [], "ours1": [], f"hand{n}": [], f"ours{n}": []}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    in_run: dict[str, list[float]] = {"ours1": [], f"ours{n}": []}
    for i in range(1, args.trivial_runs + 1):
        for size, project in ((1, one), (n, big)):
            out = work / f"hand_trivial{size}"
            h = timed_run([sys.executable, str(HAND_TRIVIAL), "--project", str(project), "--out", str(out),
                           "--models", str(size)], cwd=work)
            times[f"hand{size}"].append(h.seconds)
            cpu[f"hand{size}"].append(h.cpu_seconds)
            reset_state(project)
            o = timed_run([*streamt_cmd(), "run", "-p", str(project)], cwd=work)
            summary = parse_summary(o.stdout)
            ok = sum(1 for v in summary.values() if v["status"] == "success")
            if ok != size:
                print(o.stdout[-3000:])
                raise SystemExit(f"streamt run on {project} ran {ok}/{size} models")
            times[f"ours{size}"].append(o.seconds)
            cpu[f"ours{size}"].append(o.cpu_seconds)
            in_run[f"ours{size}"].append(run_total(o.stdout) or 0.0)
            print(f"  round {i}  {size:>3} model(s)  hand-written {h.seconds:6.1f} s (CPU {h.cpu_seconds:.1f} s; "
                  f"{h.stdout.strip()})   streamt run {o.seconds:6.1f} s (CPU {o.cpu_seconds:.1f} s; Dagster run "
                  f"{run_total(o.stdout)} s; peak RSS {o.peak_mb:.0f} MB)  [{load_avg()}]", flush=True)
    m = {k: median(v) for k, v in times.items()}
    ours_pm = (m[f"ours{n}"] - m["ours1"]) / (n - 1)
    hand_pm = (m[f"hand{n}"] - m["hand1"]) / (n - 1)
    run_pm = (median(in_run[f"ours{n}"]) - median(in_run["ours1"])) / (n - 1)
    print(f"\n  medians: hand-written 1 model {m['hand1']:.1f} s, {n} models {m[f'hand{n}']:.1f} s; "
          f"streamt run 1 model {m['ours1']:.1f} s, {n} models {m[f'ours{n}']:.1f} s")
    print(f"  per model: streamt run {ours_pm * 1000:.0f} ms (inside the Dagster run {run_pm * 1000:.0f} ms), "
          f"hand-written {hand_pm * 1000:.0f} ms")
    c = {k: median(v) for k, v in cpu.items()}
    ours_cpm = (c[f"ours{n}"] - c["ours1"]) / (n - 1)
    hand_cpm = (c[f"hand{n}"] - c["hand1"]) / (n - 1)
    print(f"  CPU per model: streamt run {ours_cpm * 1000:.0f} ms, hand-written {hand_cpm * 1000:.0f} ms, "
          f"difference {(ours_cpm - hand_cpm) * 1000:.0f} ms")
    print(f"  overhead per model: {(ours_pm - hand_pm) * 1000:.0f} ms (target < 100 ms); "
          f"ratio per-model ours/hand {ours_pm / hand_pm:.2f}" if hand_pm > 0 else
          f"  overhead per model: {(ours_pm - hand_pm) * 1000:.0f} ms (target < 100 ms)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--orders-total", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--customers", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3, help="rounds of (hand-written, streamt run)")
    ap.add_argument("--trivial-models", type=int, default=50)
    ap.add_argument("--trivial-runs", type=int, default=3)
    ap.add_argument("--with-tests", action="store_true", help="keep the project's data tests (asset checks)")
    ap.add_argument("--hand-two-queries", action="store_true",
                    help="also time the hand-written variant that parses the JSON twice (quarantine as its own query)")
    ap.add_argument("--skip-pipeline", action="store_true")
    ap.add_argument("--skip-trivial", action="store_true")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="streamt-orch-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"workdir {work}\n{machine_note()}")
    if not args.skip_pipeline:
        bench_pipeline(args, work)
    if not args.skip_trivial:
        bench_trivial(args, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
