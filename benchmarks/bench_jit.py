"""A local run's JVM compilers: ``runtime.spark.jit: auto`` (the default: C1 alone for a run with little
new data) against ``full`` (the JVM's default, C1 then C2), on the peer pipeline; ``--modes quick,full``
compares C1 alone with the default at every size (where the automatic choice's bound comes from).

Per size in ``--sizes`` (orders): the full run from fresh state, each mode in turn (the order
alternating per round); then for the first size, the rerun after +1 % orders from one saved state
(the full run's warehouse, checkpoints and Dagster instance, copied afresh for every rerun). Each run
is a whole ``streamt run`` process (``reap.py`` waits for the JVM), timed from the outside, with the
CPU of all its processes. Every run's four tables must equal the other mode's (rows and sum of the
amount column, read with delta-rs). Prints per-run figures (with the compilers the run's driver JVM
was started with, as its command line in /proc shows) and, per case, the median ratio of the first
mode to the second: below 1.0 the first is faster.

    flock /tmp/spark.lock python3 benchmarks/bench_jit.py --sizes 2000000,200000 --rounds 2
    flock /tmp/spark.lock python3 benchmarks/bench_jit.py --modes quick,full --sizes 2000000,600000,200000
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import machine_note, median, streamt_cmd
from peer_data import cached_data, fingerprint, peer_dir, streamt_outputs


def write_project(peer: Path, data: Path, folder: Path, jit: str) -> None:
    config = yaml.safe_load((peer / "streamt_project.yml").read_text().replace("__DATA__", str(data)))
    config["runtime"]["spark"]["jit"] = jit
    folder.mkdir(parents=True)
    (folder / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False))


def _java_drivers(root: int) -> list[str]:
    """Command lines of the Spark drivers (``SparkSubmit`` JVMs) under process ``root`` now."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, grew = {root}, True
    while grew:
        more = {p for p, pp in parents.items() if pp in tree} - tree
        tree |= more
        grew = bool(more)
    out = []
    for pid in tree - {root}:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "SparkSubmit" in cmd and "/java " in cmd:
            out.append(cmd)
    return out


def timed_run(peer: Path, project: Path) -> tuple[float, float, str, str, dict[str, tuple[int, float]]]:
    """Wall and CPU time of one ``streamt run``, its ``time:`` line, the compilers its driver JVM was
    started with (seen in /proc while it runs: ``C1`` alone or ``C1+C2``), and its tables' fingerprint."""
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    drivers: list[str] = []
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, str(peer / "reap.py"), *streamt_cmd(), "run", "-p", str(project)],
                                env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        while proc.poll() is None:
            if not drivers:
                drivers = _java_drivers(proc.pid)
            time.sleep(0.1)
        wall = time.perf_counter() - start
        out.seek(0)
        stdout = out.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(f"streamt run -p {project} failed:\n{stdout[-6000:]}\n")
        raise SystemExit(1)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    line = next((ln for ln in stdout.splitlines() if ln.startswith("time: ")), "")
    jit = "?" if not drivers else "C1" if "-XX:TieredStopAtLevel=1" in drivers[0] else "C1+C2"
    return wall, cpu, line, jit, fingerprint(streamt_outputs(project))


def equal(a: dict[str, tuple[int, float]], b: dict[str, tuple[int, float]]) -> bool:
    return a.keys() == b.keys() and all(a[k][0] == b[k][0] and abs(a[k][1] - b[k][1]) < 1e-6 * max(1.0, abs(a[k][1]))
                                        for k in a)


def report(case: str, runs: dict[str, list[tuple[float, float]]]) -> None:
    first, second = runs
    walls = [a[0] / f[0] for a, f in zip(runs[first], runs[second], strict=True)]
    cpus = [a[1] / f[1] for a, f in zip(runs[first], runs[second], strict=True)]
    a, b = median([r[0] for r in runs[first]]), median([r[0] for r in runs[second]])
    print(f"{case}: {first} {a:5.1f} s, {second} {b:5.1f} s: {median(walls):.2f}x wall, "
          f"{median(cpus):.2f}x CPU (medians of {len(walls)} round(s))", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000000", help="orders per base, comma-separated; the first gets the rerun")
    ap.add_argument("--customers", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="auto,full", help="the two runtime.spark.jit values compared (first / second)")
    args = ap.parse_args()
    modes = tuple(args.modes.split(","))
    assert len(modes) == 2 and set(modes) <= {"auto", "quick", "full"}, args.modes
    print(machine_note())
    peer = peer_dir()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-jit-") as tmp:
        work = Path(tmp)
        for n, size in enumerate(sizes):
            data = cached_data(peer, size, args.customers, 42)
            copy = data.linked_copy(work / f"data-{size}")
            full: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
            prints: dict[str, dict[str, tuple[int, float]]] = {}
            for i in range(args.rounds):
                for mode in modes if i % 2 == 0 else modes[::-1]:
                    project = work / f"{mode}-{size}"
                    shutil.rmtree(project, ignore_errors=True)
                    write_project(peer, copy, project, mode)
                    wall, cpu, line, jit, prints[mode] = timed_run(peer, project)
                    full[mode].append((wall, cpu))
                    print(f"full run {size:>9,} orders, jit {mode:4} ({jit:5}): {wall:5.1f} s, CPU {cpu:5.1f} s  "
                          f"{line}", flush=True)
                if not equal(*prints.values()):
                    raise SystemExit(f"the tables differ: {prints}")
            report(f"full run, {size:,} orders", full)
            if n:
                continue
            data.add_extra(copy)  # +1 %: the rerun from each mode's saved full run
            saved = {m: work / f"saved-{m}" for m in modes}
            for mode in modes:
                shutil.copytree(work / f"{mode}-{size}", saved[mode], symlinks=True)
            rerun: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
            for i in range(args.rounds):
                for mode in modes if i % 2 == 0 else modes[::-1]:
                    project = work / f"{mode}-{size}"
                    shutil.rmtree(project)
                    shutil.copytree(saved[mode], project, symlinks=True)
                    wall, cpu, line, jit, prints[mode] = timed_run(peer, project)
                    rerun[mode].append((wall, cpu))
                    print(f"+1 % rerun on {size:,} orders, jit {mode:4} ({jit:5}): {wall:5.1f} s, CPU {cpu:5.1f} s  "
                          f"{line}", flush=True)
                if not equal(*prints.values()):
                    raise SystemExit(f"the tables differ: {prints}")
            report(f"+1 % rerun on {size:,} orders", rerun)
            shutil.rmtree(copy)


if __name__ == "__main__":
    main()
