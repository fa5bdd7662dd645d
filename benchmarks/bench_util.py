"""Helpers shared by the Spark pipeline benchmarks (bench_orchestration.py, bench_incremental.py).

* :func:`timed_run`: wall time of a whole process measured from the outside (``time.perf_counter``
  around the subprocess, which also waits for the Spark driver JVM: it holds the output pipes) and
  the peak RSS and CPU seconds of the whole process tree (python + JVM), sampled with psutil when
  installed, else from ``/proc``.
* :func:`copy_project`: the example project's YAML copied into a scratch folder (never the repo's
  ``project/``), data generated there with ``project/generate.py``.
* :func:`parse_summary`: the rows/seconds table that ``streamt run`` prints.
* ``python benchmarks/bench_util.py count NAME=PATH ...``: row counts of Parquet folders (one Spark
  session), used to check that two pipelines wrote the same data.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "project"
GENERATE = EXAMPLE / "generate.py"
STATE_DIRS = (".streamt", "target", "exports")
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

try:  # optional
    import psutil  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the machine
    psutil = None


# -- process-tree memory and CPU ------------------------------------------------------------------
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _tree_proc(root: int) -> dict[int, tuple[int, float]]:
    """pid -> (RSS bytes, CPU seconds so far) for ``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[bytes]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()  # fields[0] is field 3 (state)
        stats[int(entry)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry))
    out: dict[int, tuple[int, float]] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        fields = stats.get(pid)
        if fields is not None:
            with contextlib.suppress(IndexError, ValueError):  # utime, stime: fields 14, 15; rss pages: 24
                out[pid] = (int(fields[21]) * PAGE, (int(fields[11]) + int(fields[12])) / TICK)
        todo.extend(children.get(pid, ()))
    return out


def _tree_psutil(root: int) -> dict[int, tuple[int, float]]:
    try:
        proc = psutil.Process(root)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return {}
    out: dict[int, tuple[int, float]] = {}
    for p in procs:
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            out[p.pid] = (p.memory_info().rss, t.user + t.system)
    return out


def tree_usage(root: int) -> dict[int, tuple[int, float]]:
    return _tree_psutil(root) if psutil is not None else _tree_proc(root)


class TreeSampler(threading.Thread):
    """Samples the process tree: peak total RSS, and CPU seconds (last value seen per process, so a
    process's last ``interval`` of CPU may be missed)."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak = pid, interval, 0
        self.cpu: dict[int, float] = {}
        self.names: dict[int, str] = {}  # every process seen in the tree: pid -> its command name
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            usage = tree_usage(self.pid)
            self.peak = max(self.peak, sum(rss for rss, _ in usage.values()))
            for pid, (_, cpu) in usage.items():
                self.cpu[pid] = max(cpu, self.cpu.get(pid, 0.0))
                if pid not in self.names:
                    with contextlib.suppress(OSError):
                        self.names[pid] = Path(f"/proc/{pid}/comm").read_text().strip()
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())


# -- timing ----------------------------------------------------------------------------------------
@dataclass
class Timed:
    seconds: float
    peak_rss: int
    cpu_seconds: float
    returncode: int
    stdout: str
    stderr: str
    processes: tuple[str, ...] = ()  # command names of every process seen in the tree (``java``: a JVM)

    @property
    def peak_mb(self) -> float:
        return self.peak_rss / 2**20


def timed_run(cmd: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None,
              check: bool = True, memory: bool = True) -> Timed:
    """Run ``cmd`` to completion; wall time from the outside, peak RSS and CPU seconds of the whole
    process tree (python + JVM). CPU time is less disturbed than wall time when other work shares
    the machine's cores."""
    full_env = {**os.environ, **(env or {})}
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    sampler = TreeSampler(proc.pid) if memory else None
    if sampler:
        sampler.start()
    out, err = proc.communicate()  # EOF on both pipes: the JVM child has exited too
    seconds = time.perf_counter() - start
    if sampler:
        sampler.stop()
    result = Timed(seconds, sampler.peak if sampler else 0, sampler.cpu_seconds if sampler else 0.0,
                   proc.returncode, out, err, tuple(sorted(sampler.names.values())) if sampler else ())
    if check and proc.returncode != 0:
        sys.stderr.write(f"command failed ({proc.returncode}): {' '.join(cmd)}\n--- stdout\n{out[-4000:]}\n"
                         f"--- stderr\n{err[-4000:]}\n")
        raise SystemExit(1)
    return result


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


# -- projects --------------------------------------------------------------------------------------
def streamt_cmd() -> list[str]:
    """The console script installed with this interpreter (not a version manager's shim in front of it,
    which would add its own start-up to every timed run)."""
    beside = Path(sys.executable).parent / "streamt"
    exe = str(beside) if beside.is_file() else shutil.which("streamt")
    return [exe] if exe else [sys.executable, "-m", "dagster_streamt.cli"]


def installed_streamt(venv: Path) -> Path:
    """This tree built as a wheel and installed into a new venv at ``venv`` (beside the dependencies already
    installed: ``--system-site-packages``), as a user installs the package from an index; returns the
    venv's ``bin``. Where start-up counts (a run of a second or two), time this, not the checkout: pip
    compiles the package's bytecode at install, whereas an editable checkout under
    ``PYTHONDONTWRITEBYTECODE`` (this workplace's setting) compiles every module again in every process,
    about 0.3 s a run."""
    dist = venv.parent / f"{venv.name}-dist"

    def call(*cmd: str) -> str:  # outside the checkout: `python -c` puts its folder first on sys.path
        return subprocess.run(list(cmd), cwd=venv.parent, capture_output=True, text=True, check=True).stdout.strip()

    src = venv.parent / f"{venv.name}-src"  # the tree as git lists it (new files too): no stale build/ folder
    for rel in filter(None, subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                           cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    call(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(src))
    call(sys.executable, "-m", "venv", "--system-site-packages", str(venv))
    bin_ = venv / "bin"
    (wheel,) = dist.glob("dagster_streamt-*.whl")
    call(str(bin_ / "python"), "-m", "pip", "install", "--no-index", "--no-deps", "-q", str(wheel))
    where = call(str(bin_ / "python"), "-c", "import dagster_streamt; print(dagster_streamt.__file__)")
    assert Path(where).is_relative_to(venv), f"the venv runs {where}, not its wheel"
    return bin_


def copy_project(dest: Path, with_tests: bool = False) -> Path:
    """The example project's YAML (no data, no state) copied to ``dest``."""
    ignore = shutil.ignore_patterns(".streamt", "target", "exports", "data", "__pycache__", "*.pyc",
                                    *(() if with_tests else ("tests",)))
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(EXAMPLE, dest, ignore=ignore)
    return dest


def generate(data_dir: Path, orders_per_file: int, files: int, customers: int = 2000,
             append: bool = False) -> str:
    cmd = [sys.executable, str(GENERATE), "--orders", str(orders_per_file), "--files", str(files),
           "--customers", str(customers), "--out", str(data_dir)]
    if append:
        cmd.append("--append")
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def reset_state(project: Path) -> None:
    for d in STATE_DIRS:
        shutil.rmtree(project / d, ignore_errors=True)


_ROW = re.compile(r"^(\S+)\s+(success|failed|skipped|not run)\s+(\S+)\s+(\S+)\s*$")


def parse_summary(stdout: str) -> dict[str, dict[str, object]]:
    """``streamt run``'s summary table: model -> {status, rows (int or None), seconds}."""
    lines = stdout.splitlines()
    try:
        start = max(i for i, line in enumerate(lines) if line.startswith("model ") and "status" in line)
    except ValueError:
        return {}
    out: dict[str, dict[str, object]] = {}
    for line in lines[start + 1:]:
        m = _ROW.match(line)
        if not m:
            continue
        rows = m.group(3).replace(",", "")
        secs = m.group(4)
        out[m.group(1)] = {"status": m.group(2), "rows": int(rows) if rows.isdigit() else None,
                           "seconds": float(secs) if re.fullmatch(r"[\d.]+", secs) else None}
    return out


def run_total(stdout: str) -> float | None:
    """The ``N/M model(s) succeeded in X s`` figure (the Dagster run, session start included)."""
    m = re.search(r"model\(s\) succeeded in ([\d.]+) s", stdout)
    return float(m.group(1)) if m else None


def load_avg() -> str:
    return f"load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""


def machine_note() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "dagster_streamt"],
                           capture_output=True, text=True).stdout.strip()
    return (f"cpus {os.cpu_count()}, load average {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}, "
            f"commit {head or '?'}{' + uncommitted changes in dagster_streamt/' if dirty else ''}, "
            f"memory sampler {'psutil' if psutil is not None else '/proc'}")


def count_outputs(paths: dict[str, Path]) -> dict[str, int]:
    """Row counts of Parquet folders, in one extra process (not timed)."""
    args = [f"{k}={v}" for k, v in paths.items()]
    proc = subprocess.run([sys.executable, __file__, "count", *args], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("COUNTS "):
            return json.loads(line[len("COUNTS "):])
    raise RuntimeError(f"counting failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


# -- the trivial-models project (per-model overhead) ---------------------------------------------
CHAIN = 10  # m001..m010 form a chain; every later model fans out from one of them


def trivial_parent(k: int) -> int:
    """Model ``k`` (1-based) reads model ``trivial_parent(k)``; 0 means the source."""
    if k == 1:
        return 0
    if k <= CHAIN:
        return k - 1
    return (k - CHAIN - 1) % CHAIN + 1


def trivial_name(k: int) -> str:
    return f"m{k:03d}"


def write_trivial_project(root: Path, n_models: int, rows: int = 100) -> Path:
    """One tiny CSV source (id, v) and ``n_models`` trivial table models (chain plus fan-outs)."""
    if root.exists():
        shutil.rmtree(root)
    (root / "data" / "items").mkdir(parents=True)
    (root / "models").mkdir()
    with (root / "data" / "items" / "items.csv").open("w") as fh:
        fh.write("id,v\n" + "".join(f"{i},{i * 0.5}\n" for i in range(1, rows + 1)))
    (root / "stream_project.yml").write_text(
        "project: {name: trivial, version: \"1.0.0\"}\n"
        "runtime:\n  spark:\n    master: \"local[2]\"\n    conf: {spark.sql.shuffle.partitions: \"4\"}\n"
        "    warehouse: .streamt/warehouse\n    checkpoints: .streamt/checkpoints\n"
        "defaults: {models: {materialized: table, owner: bench}}\n"
        "sources:\n  - name: items\n    description: tiny source\n    format: csv\n    path: data/items\n"
        "    options: {header: \"true\"}\n"
        "    columns: [{name: id, type: bigint}, {name: v, type: double}]\n")
    lines = ["models:"]
    for k in range(1, n_models + 1):
        parent = trivial_parent(k)
        src = 'source("items")' if parent == 0 else f'ref("{trivial_name(parent)}")'
        lines += [f"  - name: {trivial_name(k)}", "    description: trivial model",
                  f"    sql: SELECT id, v FROM {{{{ {src} }}}}"]
    (root / "models" / "models.yml").write_text("\n".join(lines) + "\n")
    return root


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
        return "\n".join(fmt.format(*r) for r in [self.header, *self.rows])


def _count_main(args: list[str]) -> None:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("bench-count")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    counts: dict[str, int] = {}
    for arg in args:
        name, path = arg.split("=", 1)
        p = Path(path)
        has_files = p.is_dir() and any(f.suffix == ".parquet" for f in p.rglob("*.parquet"))
        counts[name] = spark.read.parquet(str(p)).count() if has_files else 0
    spark.stop()
    print("COUNTS " + json.dumps(counts))


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "count":
        _count_main(sys.argv[2:])
    else:
        print(__doc__)
