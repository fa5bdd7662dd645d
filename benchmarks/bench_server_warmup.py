"""What the project server's warm-up costs, and what it buys the first run on that server.

For each warm-up setting (``runtime.spark.connect_server.warmup``: off, quick, full) on a fresh copy of
the example project with generated data: ``streamt server start`` (timed; CPU of the command and of the
server JVM from the moment it exists, both read from ``/proc``), then one ``streamt run`` through that
server (wall clock and the server's CPU during it), then ``streamt server stop``. The warm-up's own
cost is the CPU of ``start`` minus the same figure with ``off`` (a ratio to ``off`` too); what it buys is
the first run's wall time against the run after ``off`` (a ratio). Rounds alternate the settings.

    flock /tmp/spark.lock python benchmarks/bench_server_warmup.py             # off, quick; 3 rounds
    flock /tmp/spark.lock python benchmarks/bench_server_warmup.py --full      # off, quick, full

No assertion: figures and ratios only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import copy_project, generate, machine_note, median, streamt_cmd

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` so far (utime + stime; 0 when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def streamt(project: Path, *args: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command's own process tree, stdout) of one ``streamt`` command."""
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    before, start = children_cpu(), time.perf_counter()
    proc = subprocess.run([*streamt_cmd(), *args, "-p", str(project)], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"streamt {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wall, children_cpu() - before, proc.stdout


def set_warmup(project: Path, mode: str) -> None:
    """``runtime.spark.connect_server.warmup: <mode>`` in the copy's ``stream_project.yml``."""
    yml = project / "stream_project.yml"
    text, n = re.subn(r"^  spark:\n", f"  spark:\n    connect_server: {{warmup: {mode}}}\n", yml.read_text(),
                      count=1, flags=re.M)
    if n != 1:
        raise SystemExit(f"{yml} has no runtime.spark block to extend")
    yml.write_text(text)


def one(work: Path, data: Path, mode: str, label: str) -> dict[str, float]:
    project = copy_project(work / f"proj-{label}")
    shutil.copytree(data, project / "data")
    set_warmup(project, mode)
    wall, cpu, _ = streamt(project, "server", "start")
    state = json.loads((project / ".streamt" / "connect-server" / "server.json").read_text())
    pid = int(state["pid"])
    server_cpu = proc_cpu(pid)  # everything the JVM did so far: its start and the warm-up
    try:
        before = proc_cpu(pid)
        run_wall, run_cpu, _ = streamt(project, "run")
        run_server = proc_cpu(pid) - before
    finally:
        streamt(project, "server", "stop")
    shutil.rmtree(project, ignore_errors=True)
    return {"start_s": wall, "start_cpu_s": cpu + server_cpu, "run_s": run_wall, "run_cpu_s": run_cpu + run_server}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="also measure the full warm-up (about a minute)")
    ap.add_argument("--orders", type=int, default=20_000, help="orders per data file (4 files)")
    args = ap.parse_args()
    modes = ["off", "quick", *(["full"] if args.full else [])]
    work = Path(tempfile.mkdtemp(prefix="streamt-warmup-"))
    print(machine_note(), flush=True)
    try:
        data = work / "data"
        generate(data, args.orders, 4)
        got: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
        for i in range(args.rounds):
            for mode in modes:
                r = one(work, data, mode, f"{mode}-{i}")
                got[mode].append(r)
                print(f"round {i + 1} {mode:5s}: server start {r['start_s']:5.1f} s (CPU {r['start_cpu_s']:5.1f} s); "
                      f"first run {r['run_s']:5.1f} s (CPU {r['run_cpu_s']:5.1f} s)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = {k: median([r[k] for r in got["off"]]) for k in got["off"][0]}
    print("\nmedians (warm-up CPU = start CPU - start CPU with warmup: off)")
    for mode in modes:
        med = {k: median([r[k] for r in got[mode]]) for k in got[mode][0]}
        extra = med["start_cpu_s"] - base["start_cpu_s"]
        print(f"  {mode:5s}: start {med['start_s']:5.1f} s, warm-up CPU {extra:5.1f} s "
              f"(start CPU {med['start_cpu_s'] / base['start_cpu_s']:.2f}x off); first run {med['run_s']:5.1f} s = "
              f"{med['run_s'] / base['run_s']:.2f}x the first run after off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
