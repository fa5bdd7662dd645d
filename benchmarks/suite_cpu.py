"""Where the test suite's CPU goes, by kind of process: the measurement behind issue 37's choices.

On 2 cores with two pytest-xdist workers the suite keeps the CPU ~92 % busy, so its wall time is its CPU
time over two; cutting it means cutting CPU somewhere. This samples ``/proc`` every second while a command
runs (by default the whole suite), adds each process's CPU (user + system) to a kind named from its command
line and its parent's (the shared Spark session's JVM is a child of a pytest worker, a `streamt run`
driver's JVM the child of a `streamt` process), and prints the kinds, largest first. A process living
under a second between two samples is counted in its parent's ``cutime`` when reaped: the total line says
how much CPU the sampler saw against what the machine spent (``/proc/stat``).

    python3 benchmarks/suite_cpu.py                        # the whole suite, as CI runs it
    python3 benchmarks/suite_cpu.py -- python3 -m pytest tests/spark/test_cluster.py
    python3 benchmarks/suite_cpu.py --threads -- python3 -m pytest -n 0 tests/spark/test_stream.py

``--threads`` splits each JVM's CPU by its threads' names (HotSpot's compilers and garbage collectors,
Spark's task threads, the driver's own): what a JVM spends on running code against compiling it.

Measured on the whole suite (2 cores, coverage on, 3438 s): the machine 97 % busy; the shared Spark
sessions' JVMs 38 % of the CPU, `streamt` subprocesses' JVMs 19 %, Spark Connect servers 10 %, the pytest
workers' Python 9 %, the `streamt` processes' Python 7 %, cluster executors 5 %, Chromium, the broker, pip,
Dagster's servers 2 % each. Within the shared session (tests/spark/test_incremental_table.py, ``-n 0``)
HotSpot's C2 compiler took 26 % of its CPU, C1 7 %, Spark's task threads 8 %; the quick JIT alone
(282 s -> 347 s) or C2 kept for hotter code (Tier4 thresholds x10: 327 s) cost more than they saved.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import TICK, tree_usage

# A JVM's kind by its main class (and, for spark-submit, the class it submits); other processes by words
# of their command line, first match wins
JVM_KINDS: tuple[tuple[str, str], ...] = (
    ("SparkConnectServer", "Spark Connect server JVM"),
    ("org.apache.spark.deploy.master", "cluster master/worker JVMs"),
    ("org.apache.spark.deploy.worker", "cluster master/worker JVMs"),
    ("CoarseGrainedExecutorBackend", "cluster executor JVMs"),
    ("org.apache.kafka.connect", "Kafka Connect JVM"),
    ("kafka.Kafka", "Kafka broker JVM"),
    ("org.apache.flink", "Flink (JVM)"),
    ("org.apache.spark.deploy.SparkSubmit", "Spark driver JVM"),
)
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Chromium", ("chrom",)),
    ("PostgreSQL", ("postgres",)),
    ("moto S3 server", ("moto",)),
    ("pip / venv / wheel builds", ("pip",)),
    ("streamt CLI processes (python)", ("dagster_streamt.cli",)),
    ("streamt CLI processes (python)", ("bin/streamt",)),
    ("dagster dev / webserver / daemon / code servers", ("dagster",)),
    ("Flink (python)", ("flink",)),
    ("pytest workers (python)", ("pytest",)),
    ("pytest workers (python)", ("execnet",)),
    ("pytest workers (python)", ("sys.stdin.readline",)),
    ("other python", ("python",)),
)


def _java_main(args: list[str]) -> str:
    """The main class of a ``java`` command line, with spark-submit's ``--class`` appended."""
    rest = iter(args[1:])
    main = ""
    for arg in rest:
        if arg in ("-cp", "-classpath", "--class-path", "-jar"):
            next(rest, None)
        elif not arg.startswith("-"):
            main = arg
            break
    following = list(rest)
    if "--class" in following:
        main += " " + following[following.index("--class") + 1]
    return main


def _parent(pid: int) -> int:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(raw[raw.rindex(")") + 2:].split()[1])  # after the command name, which may hold spaces


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _kind(args: list[str], parent: list[str]) -> str:
    if args and Path(args[0]).name == "java":
        main = _java_main(args)
        for cls, kind in JVM_KINDS:
            if cls in main:
                if kind == "Spark driver JVM":  # whose driver: a pytest worker's shared session, or a subprocess's
                    return ("Spark driver JVM of a pytest worker (shared session, run_here)"
                            if _kind(parent, []) == "pytest workers (python)"
                            else "Spark driver JVM of a subprocess (streamt run, benchmarks)")
                return kind
        return f"other JVMs ({main or '?'})"
    cmd = " ".join(args)
    for kind, words in KINDS:
        if all(w in cmd for w in words):
            return kind
    return "other processes"


def _machine_cpu() -> float:
    """CPU seconds the machine spent outside idle and iowait."""
    cols = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(cols) - cols[3] - cols[4]) / TICK


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="*", help="the command to measure (default: python3 -m pytest)")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    parser.add_argument("--threads", action="store_true", help="split each JVM's CPU by thread name")
    args = parser.parse_args()
    command = args.command or [sys.executable, "-m", "pytest"]
    seen: dict[int, float] = {}  # pid -> its CPU counted so far
    threads: dict[int, float] = {}  # the same for each JVM thread (with --threads)
    spent: Counter[str] = Counter()
    machine0, start = _machine_cpu(), time.monotonic()
    proc = subprocess.Popen(command)
    while True:
        done = proc.poll() is not None
        for pid, (_, cpu) in tree_usage(proc.pid).items():  # the command and its descendants
            # classified at every sample: a shell script exec's its JVM under the same pid
            kind = _kind(_cmdline(pid), _cmdline(_parent(pid)))
            if args.threads and "JVM" in kind:
                for name, tid, tcpu in _threads(pid):
                    spent[f"{kind}: {name}"] += tcpu - threads.get(tid, 0.0)
                    threads[tid] = tcpu
            spent[kind] += cpu - seen.get(pid, 0.0)
            seen[pid] = cpu
        if done:
            break
        time.sleep(args.every)
    wall, machine = time.monotonic() - start, _machine_cpu() - machine0
    total = sum(v for k, v in spent.items() if ": " not in k)  # a JVM's threads are within its own line
    print(f"\nCPU by kind of process ({wall:.0f} s wall, {machine:.0f} s CPU on the machine, "
          f"{total:.0f} s seen by the sampler, {100 * machine / wall / (os.cpu_count() or 1):.0f} % busy):")
    for kind, secs in sorted(spent.items(), key=lambda kv: (-kv[1], kv[0])):
        if ": " not in kind:
            print(f"{secs:9.1f} s  {100 * secs / max(total, 1e-9):5.1f} %  {kind}")
            parts = sorted(((k, v) for k, v in spent.items() if k.startswith(kind + ": ") and v >= 0.05 * secs),
                           key=lambda kv: (-kv[1], kv[0]))
            for part, psecs in parts:  # its threads taking 5 % of it or more
                print(f"{'':9}   {100 * psecs / max(secs, 1e-9):5.1f} %    {part[len(kind) + 2:]}")
    return proc.returncode


def _threads(pid: int) -> list[tuple[str, int, float]]:
    """(name without its number, tid, CPU seconds) of each thread of ``pid``."""
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for tid in tids:
        try:
            raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        name = raw[raw.index("(") + 1:raw.rindex(")")].rstrip("0123456789#-").strip()
        fields = raw[raw.rindex(")") + 2:].split()
        out.append((name, int(tid), (int(fields[11]) + int(fields[12])) / TICK))
    return out


if __name__ == "__main__":
    sys.exit(main())
