"""``streamt run`` against the peer pipeline hand-written incrementally by an expert (issue 39).

The anchor is ``handwritten_incremental.py``: ``availableNow`` queries with checkpoints,
``foreachBatch`` ``MERGE`` for the aggregates, Delta tables (``--defaults``: Delta's and Spark's default
session; by default tuned as the package's local sessions are; ``--expert-quick-jit``: its +1 % rerun
also with the JVM's C1 compiler alone, as streamt's local runs with little new data choose). Per round,
from fresh state on a fresh (hard-linked) copy of the shared peer data, the two sides alternate (streamt
first in odd rounds): a full run each, then one more orders file (+1 %), then a rerun each. After every
pair of runs both sides' four tables (rows and sum of the amount column, read with delta-rs) must be
equal; a difference is printed and the script exits 1. Each run is a whole process (``reap.py`` waits
for the JVM), timed from the outside.
Goals: our +1 % rerun <= 0.5x theirs, our full run <= 1.0x theirs.

``--scale 2000000,8000000``: the cost of the same new orders on bases of different sizes, ours only:
per base a full run, then one file of ``--new`` orders (default 20,000), then a rerun; prints each
rerun and the ratio of the largest base's to the smallest's (goal <= 1.3).

    flock /tmp/spark.lock python3 benchmarks/bench_expert_peer.py --rounds 2
    flock /tmp/spark.lock python3 benchmarks/bench_expert_peer.py --scale 2000000,8000000
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import Run, server_env, timed
from bench_util import machine_note, median, streamt_cmd
from peer_data import OUTPUTS, PeerData, cached_data, differences, fingerprint, peer_dir, streamt_outputs

EXPERT = Path(__file__).resolve().parent / "handwritten_incremental.py"


def time_line(stdout: str) -> str:
    return next((ln for ln in stdout.splitlines() if ln.startswith("time: ")), "")


class Sides:
    def __init__(self, peer: Path, work: Path, tuned: bool, expert_quick_jit: bool = False) -> None:
        self.peer, self.work, self.tuned, self.expert_quick_jit = peer, work, tuned, expert_quick_jit

    def project(self, data: Path, name: str) -> Path:
        project = self.work / name
        project.mkdir(parents=True)
        text = (self.peer / "streamt_project.yml").read_text().replace("__DATA__", str(data))
        (project / "stream_project.yml").write_text(text)
        return project

    def ours(self, project: Path, label: str) -> tuple[Run, dict[str, tuple[int, float]]]:
        run = timed([*streamt_cmd(), "run", "-p", str(project)], self.peer, project.parent, server_env(), label)
        return run, fingerprint(streamt_outputs(project))

    def theirs(self, data: Path, out: Path, label: str,
               increment: bool = False) -> tuple[Run, dict[str, tuple[int, float]]]:
        tuned = ["--tuned"] if self.tuned else []
        if increment and self.expert_quick_jit:
            tuned.append("--quick-jit")
        cmd = [sys.executable, str(EXPERT), "--data", str(data), "--out", str(out), *tuned]
        run = timed(cmd, self.peer, out.parent, dict(os.environ), label)
        return run, fingerprint({n: out / n for n in OUTPUTS})


def compare(what: str, ours: dict[str, tuple[int, float]], theirs: dict[str, tuple[int, float]]) -> None:
    diff = differences(ours, theirs)
    if diff:
        print(f"  {what}: the tables differ: {'; '.join(diff)}")
        raise SystemExit(1)
    print(f"  {what}: equal tables {ours}")


def head_to_head(sides: Sides, data: PeerData, rounds: int) -> None:
    full: list[tuple[float, float]] = []
    rerun: list[tuple[float, float]] = []
    for i in range(1, rounds + 1):
        copy = data.linked_copy(sides.work / f"data-{i}")
        project = sides.project(copy, f"streamt-{i}")
        out = sides.work / f"expert-{i}"
        out.mkdir()
        order = ("ours", "theirs") if i % 2 else ("theirs", "ours")
        for phase, times in (("full", full), ("+1 %", rerun)):
            if phase == "+1 %":
                data.add_extra(copy)
            got = {}
            for side in order:
                run, tables = (sides.ours(project, f"streamt {phase}") if side == "ours"
                               else sides.theirs(copy, out / "o", f"expert {phase}", increment=phase == "+1 %"))
                got[side] = (run, tables)
                note = f"  {time_line(run.stdout)}" if side == "ours" else ""
                print(f"round {i} {phase:5} {'streamt run' if side == 'ours' else 'hand-written':13} "
                      f"{run.seconds:6.1f} s{note}")
            compare(f"round {i} {phase}", got["ours"][1], got["theirs"][1])
            times.append((got["ours"][0].seconds, got["theirs"][0].seconds))
        shutil.rmtree(copy)
    for phase, times, goal in (("full run", full, 1.0), ("+1 % rerun", rerun, 0.5)):
        ours, theirs = median([t[0] for t in times]), median([t[1] for t in times])
        ratio = median([a / b for a, b in times])
        print(f"{phase:11}: streamt {ours:5.1f} s, hand-written incremental {theirs:5.1f} s: "
              f"{ratio:.2f}x (median of the per-round ratios; goal <= {goal})")


def scale(sides: Sides, peer: Path, sizes: list[int], new: int, customers: int) -> None:
    reruns: dict[int, float] = {}
    for size in sizes:
        data = cached_data(peer, size, customers, 42, extra_orders=new)
        copy = data.linked_copy(sides.work / f"scale-{size}")
        project = sides.project(copy, f"scale-streamt-{size}")
        first, _ = sides.ours(project, f"streamt full {size}")
        data.add_extra(copy)
        again, _ = sides.ours(project, f"streamt +{new} on {size}")
        reruns[size] = again.seconds
        print(f"base {size:>10,} orders: full run {first.seconds:6.1f} s, +{new:,} orders {again.seconds:5.1f} s  "
              f"{time_line(again.stdout)}")
        shutil.rmtree(copy)
    small, large = min(reruns), max(reruns)
    print(f"+{new:,} orders on {large:,} / on {small:,}: {reruns[large] / reruns[small]:.2f}x (goal <= 1.3)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, default=2_000_000)
    ap.add_argument("--customers", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--defaults", action="store_true", help="the hand-written side on Delta's and Spark's defaults")
    ap.add_argument("--expert-quick-jit", action="store_true",
                    help="the hand-written +1 %% rerun with the JVM's C1 compiler alone, as streamt's small runs")
    ap.add_argument("--scale", default=None, metavar="N,M", help="base sizes for the cost-of-new-data comparison")
    ap.add_argument("--new", type=int, default=20_000, help="new orders added in --scale")
    args = ap.parse_args()
    print(machine_note())
    peer = peer_dir()
    with tempfile.TemporaryDirectory(prefix="expert-peer-") as tmp:
        sides = Sides(peer, Path(tmp), tuned=not args.defaults, expert_quick_jit=args.expert_quick_jit)
        if args.scale:
            scale(sides, peer, sorted(int(s) for s in args.scale.split(",")), args.new, args.customers)
        else:
            head_to_head(sides, cached_data(peer, args.orders, args.customers, 42), args.rounds)


if __name__ == "__main__":
    main()
