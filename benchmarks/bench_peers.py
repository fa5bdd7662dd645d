"""The peer comparison of issues 14 and 25: ``streamt run`` against the same job hand-written in PySpark
writing Delta tables (``handwritten_delta.py``, here: the baseline, as streamt's tables are Delta), the
peer folder's hand-written job writing Parquet (``handwritten.py``, shown beside it; ``--baseline parquet``
swaps the two) and Spark Declarative Pipelines (``spark-pipelines run`` via ``run_sdp.sh``) on the shared
peer pipeline (``shared/peer-bench``: 2 M dirty NDJSON orders, 100 k customers, 4 table models).

Every run is a whole process started through ``reap.py`` (which waits for the driver JVM too), timed
with the wall clock from here and with ``/usr/bin/time -v`` (CPU of the whole tree, largest RSS) when
present. Each run starts from fresh state: its own output folder, its own SDP folder, its own copy of
the streamt project (``DAGSTER_HOME`` unset, so the project's own Dagster instance is used).

Modes (no mode flag: ``--full``; ``--all``: the three):

* ``--full``: rounds of hand-written Delta, hand-written Parquet, SDP (``--no-sdp``: without), streamt
  (A B C D A B C D ...); per-runner medians and the median of the per-round ratios vs the baseline (goal:
  streamt <= 1.10), vs the other hand-written job and streamt vs SDP (goal: < 1). Each streamt run is
  one-shot (the default): it starts its own JVM and leaves nothing running.
* ``--warm``: repeated runs on the project's Spark Connect server: a first ``streamt run`` (embedded),
  then ``streamt server start`` (timed: start and its quick warm-up), then rounds of hand-written and
  ``streamt run --full-refresh`` on that project (every table rebuilt from all of its input, the work
  of a first run: a plain rerun of unchanged data does nothing), which connect to it (goal: warm
  streamt <= hand-written - 5 s; the server's CPU is added to each run's). The server is stopped at
  the end.
* ``--incremental``: per round, a fresh project on a fresh (hard-linked) copy of the data: full run,
  +1 % orders (one more file from ``gen_data.py --start-file``), both hand-written jobs on the +1 % data
  (a hand-written job has no increments: its user reruns it whole), rerun; rerun/full (goal <= 0.25) and
  rerun / hand-written. Then a rerun with no new data, and a full rebuild (``--full-refresh``), so the
  rerun is also shown against the same work (like for like). Every run is one-shot (the default);
  ``--on-server``: the reruns go to the project's server, started after the full run. ``--in-a-row N``:
  N +1 % reruns in a row, each after one more +1 % file (on the server: its steady state, where code is
  compiled and the tables' logs are read), each checked against the baseline's run on the same files.

Correctness, after every run: rows and sum of the amount column of each output (orders_clean,
customer_orders, order_metrics, tier_revenue; a Delta table's current version, read with delta-rs) equal
the baseline's on the same data; streamt's quarantine holds exactly the malformed order lines (counted
here in Python, independently of Spark). Any difference is printed and the script exits 1. No assertion
on timings: figures and ratios only.

Spark runs one job at a time on this machine; run the script under the shared lock (it does not
take the lock itself, so the processes it starts do not deadlock on it):

    flock /tmp/spark.lock python benchmarks/bench_peers.py                  # 2 M orders, 3 rounds
    flock /tmp/spark.lock python benchmarks/bench_peers.py --all --json     # goals 1-3, JSON at the end
    flock /tmp/spark.lock python benchmarks/bench_peers.py --quick --all    # 100 k orders, 1 round

``spark-pipelines`` comes with pyspark; its extra dependencies (``pyspark[pipelines]``) are installed
with pip by this script when missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import Table, load_avg, machine_note, median, parse_summary, run_total, streamt_cmd
from peer_data import (
    OUTPUTS,
    PeerData,
    cached_data,
    differences,
    fingerprint,
    peer_dir,
    streamt_outputs,
    streamt_quarantined,
)

TIME = Path("/usr/bin/time")
REBUILD_ALL = "orders_raw+ customers_raw+"  # every model of the peer project: --full-refresh rebuilds them all
HAND_DELTA = Path(__file__).resolve().parent / "handwritten_delta.py"
HAND_NAMES = {"delta": "hand-written Delta", "parquet": "hand-written Parquet"}
OTHER = {"delta": "parquet", "parquet": "delta"}
PIPELINES_MODULES = ("yaml", "grpc", "grpc_status", "google.rpc", "pandas", "pyarrow", "zstandard", "numpy")


# -- processes -------------------------------------------------------------------------------------
@dataclass
class Run:
    seconds: float  # wall clock, from here
    cpu: float | None  # user + system of the whole process tree (JVM included, thanks to reap.py)
    rss_mb: float | None  # largest single process (ru_maxrss)
    stdout: str
    stderr: str


def _time_v(path: Path) -> tuple[float | None, float | None]:
    text = path.read_text(errors="replace") if path.is_file() else ""

    def num(label: str) -> float | None:
        m = re.search(rf"{re.escape(label)}: ([\d.]+)", text)
        return float(m.group(1)) if m else None

    user, system = num("User time (seconds)"), num("System time (seconds)")
    rss = num("Maximum resident set size (kbytes)")
    return (user + system if user is not None and system is not None else None,
            rss / 1024 if rss is not None else None)


def timed(cmd: Sequence[str], peer: Path, cwd: Path, env: dict[str, str], label: str) -> Run:
    """Run ``cmd`` through reap.py; exit with its output when it fails."""
    full = [sys.executable, str(peer / "reap.py"), *cmd]
    stats = cwd / f".time-{os.getpid()}-{time.monotonic_ns()}"
    if TIME.exists():
        full = [str(TIME), "-v", "-o", str(stats), *full]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(full, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, rss = _time_v(stats)
    stats.unlink(missing_ok=True)
    if cpu is None:  # reap.py folds every descendant into its own children's rusage, which we collect
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(f"{label} failed ({proc.returncode}): {' '.join(cmd)}\n--- stdout\n{proc.stdout[-4000:]}\n"
                         f"--- stderr\n{proc.stderr[-4000:]}\n")
        raise SystemExit(1)
    return Run(seconds, cpu, rss, proc.stdout, proc.stderr)


def server_env() -> dict[str, str]:
    """The environment of a ``streamt`` command: the project's own Dagster instance."""
    return {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}


def wall_timed(cmd: Sequence[str], cwd: Path, env: dict[str, str], label: str) -> Run:
    """Run ``cmd`` without reap.py (a server it starts outlives it): wall clock to its exit, no CPU."""
    start = time.perf_counter()
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(f"{label} failed ({proc.returncode}): {' '.join(cmd)}\n--- stdout\n{proc.stdout[-4000:]}\n"
                         f"--- stderr\n{proc.stderr[-4000:]}\n")
        raise SystemExit(1)
    return Run(seconds, None, None, proc.stdout, proc.stderr)


def proc_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its waited-for children so far (0 when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(b")") + 2:].split()  # fields[0] is field 3 (state)
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def start_server(project: Path) -> tuple[int, float]:
    """``streamt server start`` on ``project`` (the server and its quick warm-up): (its pid, seconds)."""
    start = time.perf_counter()
    proc = subprocess.run([*streamt_cmd(), "server", "start", "-p", str(project)], cwd=project.parent,
                          env=server_env(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"streamt server start failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    state = json.loads((project / ".streamt" / "connect-server" / "server.json").read_text())
    return int(state["pid"]), seconds


STOP = """
import sys
from pathlib import Path
from dagster_streamt.spark.session.project_server import stop_project_server
from dagster_streamt.spec.loader import load_project
print(stop_project_server(load_project(Path(sys.argv[1]))[0]))
"""


def stop_server(project: Path) -> str:
    proc = subprocess.run([sys.executable, "-c", STOP, str(project)], capture_output=True, text=True,
                          env=server_env())
    return proc.stdout.strip() or proc.stderr.strip()[-300:]


def ensure_pipelines() -> Path:
    """The ``spark-pipelines`` launcher of this Python's pyspark, with pyspark[pipelines]'s dependencies."""
    import pyspark

    venv = Path(sys.prefix)
    launcher = venv / "bin" / "spark-pipelines"
    missing = [m for m in PIPELINES_MODULES if importlib.util.find_spec(m.split(".")[0]) is None
               or (m == "google.rpc" and importlib.util.find_spec(m) is None)]
    if missing or not launcher.is_file():
        spec = f"pyspark[pipelines]=={pyspark.__version__}"
        print(f"installing {spec} (missing: {', '.join(missing) or launcher})", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", spec],
                       check=True, env={**os.environ, "PIP_BREAK_SYSTEM_PACKAGES": "1"})
        if not launcher.is_file():
            raise SystemExit(f"{launcher} still missing after installing {spec}")
    return venv


# -- the three runners -----------------------------------------------------------------------------
@dataclass
class Result:
    runner: str
    run: Run
    outputs: dict[str, tuple[int, float]]
    quarantined: int | None = None
    note: str = ""


@dataclass
class Bench:
    peer: Path
    work: Path
    venv: Path
    log: Callable[[str], None]
    reference: dict[Path, dict[str, tuple[int, float]]] = field(default_factory=dict)  # data dir -> hand's
    problems: list[str] = field(default_factory=list)
    counter: int = 0
    as_stream: tuple[str, ...] = ()  # models run as `materialized: stream` in the streamt project copies
    baseline: str = "delta"  # the hand-written job the ratios are taken against: "delta" or "parquet"
    streamt_conf: tuple[tuple[str, str], ...] = ()  # Spark settings added to the streamt project copies
    keys: tuple[tuple[str, str], ...] = ()  # (model, key columns): a streamt `key:` added to table models

    @property
    def base_name(self) -> str:
        return HAND_NAMES[self.baseline]

    @property
    def other_name(self) -> str:
        return HAND_NAMES[OTHER[self.baseline]]

    def _dir(self, kind: str) -> Path:
        self.counter += 1
        d = self.work / kind / f"{self.counter:03d}"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        return d

    def hand(self, data: Path, fmt: str | None = None) -> Result:
        """The hand-written job writing ``fmt`` (default: the baseline): ``handwritten_delta.py`` (Delta
        tables, this folder) or the peer folder's ``handwritten.py`` (Parquet). The baseline's first run on
        ``data`` gives the rows and sums every other run on that data must have."""
        fmt = fmt or self.baseline
        out = self._dir(f"hand-{fmt}")
        script = HAND_DELTA if fmt == "delta" else self.peer / "handwritten.py"
        run = timed([sys.executable, str(script), "--data", str(data), "--out", str(out / "o")],
                    self.peer, out, dict(os.environ), script.name)
        got = fingerprint({n: out / "o" / n for n in OUTPUTS})
        if fmt == self.baseline:
            self.reference.setdefault(data, got)
        phases = next((line for line in run.stdout.splitlines() if line.startswith("handwritten:")), "")
        result = Result(HAND_NAMES[fmt], run, got, note=phases.removeprefix("handwritten: "))
        shutil.rmtree(out, ignore_errors=True)  # 2 M orders: some 100 MB per run
        return self._checked(result, data)

    def sdp(self, data: Path) -> Result:
        scratch = self._dir("sdp")
        env = {**os.environ, "DATA": str(data), "SPARK_VENV": str(self.venv), "BENCH_TMP": str(scratch)}
        run = timed(["bash", str(self.peer / "run_sdp.sh"), "new"], self.peer, scratch, env, "run_sdp.sh")
        (run_dir,) = sorted((scratch / "sdp_runs").glob("run.*"))
        got = fingerprint({n: run_dir / "spark-warehouse" / n for n in OUTPUTS})
        return self._checked(Result("SDP", run, got), data)

    def new_project(self, data: Path) -> Path:
        project = self._dir("streamt")
        text = (self.peer / "streamt_project.yml").read_text().replace("__DATA__", str(data))
        for model in self.as_stream:
            block = f"  - name: {model}\n    materialized: table\n"
            assert block in text, f"streamt_project.yml has no table model {model}"
            text = text.replace(block, block.replace("materialized: table", "materialized: stream"))
        for model, key in self.keys:
            block = f"  - name: {model}\n    materialized: table\n"
            assert block in text, f"streamt_project.yml has no table model {model}"
            text = text.replace(block, block + f"    key: {json.dumps(key)}\n")
        if self.streamt_conf:
            assert "    conf: {" in text, "streamt_project.yml has no runtime.spark.conf mapping"
            extra = "".join(f"{json.dumps(k)}: {json.dumps(v)}, " for k, v in self.streamt_conf)
            text = text.replace("    conf: {", "    conf: {" + extra, 1)
        (project / "stream_project.yml").write_text(text)
        return project

    def streamt(self, data: Path, project: Path, label: str = "streamt run", expect_bad: int | None = None,
                server: int | None = None, rebuild: bool = False) -> Result:
        """``streamt run``. ``server``: the pid of the project's Spark Connect server, whose CPU the run
        also costs (runs use it while it is up; without it, each run starts its own JVM).
        ``rebuild``: every table rebuilt from all its input (``--full-refresh``), as on a fresh project."""
        env = server_env()
        before = proc_cpu(server) if server else 0.0
        cmd = [*streamt_cmd(), "run", "-p", str(project), *(["--full-refresh", REBUILD_ALL] if rebuild else [])]
        run = timed(cmd, self.peer, project.parent, env, label)
        if server and run.cpu is not None:
            run.cpu += proc_cpu(server) - before
        got = fingerprint(streamt_outputs(project))
        summary = parse_summary(run.stdout)
        note = f"Dagster run {run_total(run.stdout)} s; " + ", ".join(
            f"{m} {v['seconds']}" for m, v in summary.items())
        result = Result(label, run, got, streamt_quarantined(project), note)
        if expect_bad is not None and result.quarantined != expect_bad:
            self.problems.append(f"{label} in {project}: quarantine holds {result.quarantined} rows, "
                                 f"{expect_bad} malformed lines in the data")
        return self._checked(result, data)

    def _checked(self, result: Result, data: Path) -> Result:
        want = self.reference.get(data)
        if want is not None:
            self.problems += [f"{result.runner} on {data}: {d}" for d in differences(result.outputs, want)]
        return result

    def show(self, tag: str, r: Result) -> None:
        cpu = f"CPU {r.run.cpu:6.1f} s" if r.run.cpu is not None else "CPU      - "
        rss = f"max RSS {r.run.rss_mb:5.0f} MB" if r.run.rss_mb is not None else ""
        q = f"  quarantined {r.quarantined}" if r.quarantined is not None else ""
        note = f"  ({r.note})" if r.note else ""
        self.log(f"  {tag:<9} {r.runner:<22} {r.run.seconds:7.1f} s  {cpu}  {rss}  [{load_avg()}]{q}{note}")


# -- statistics ------------------------------------------------------------------------------------
def stats(results: list[Result]) -> dict[str, Any]:
    walls = [r.run.seconds for r in results]
    cpus = [r.run.cpu for r in results if r.run.cpu is not None]
    rss = [r.run.rss_mb for r in results if r.run.rss_mb is not None]
    return {"runs": [round(w, 2) for w in walls], "median_s": round(median(walls), 2),
            "median_cpu_s": round(median(cpus), 2) if cpus else None,
            "median_max_rss_mb": round(median(rss)) if rss else None}


def ratio(a: list[Result], b: list[Result]) -> dict[str, Any]:
    """Median of the per-round ratios a/b (wall and CPU)."""
    walls = [x.run.seconds / y.run.seconds for x, y in zip(a, b, strict=True)]
    cpus = [x.run.cpu / y.run.cpu for x, y in zip(a, b, strict=True) if x.run.cpu and y.run.cpu]
    return {"per_round": [round(w, 3) for w in walls], "median": round(median(walls), 3),
            "median_cpu": round(median(cpus), 3) if cpus else None}


def runner_table(groups: dict[str, list[Result]]) -> str:
    t = Table(["runner", "runs", "median wall s", "min", "max", "median CPU s", "median max RSS MB"])
    for name, rs in groups.items():
        s = stats(rs)
        t.add(name, len(rs), f"{s['median_s']:.1f}", f"{min(s['runs']):.1f}", f"{max(s['runs']):.1f}",
              "-" if s["median_cpu_s"] is None else f"{s['median_cpu_s']:.1f}",
              "-" if s["median_max_rss_mb"] is None else s["median_max_rss_mb"])
    return t.render()


def ratio_table(rows: list[tuple[str, dict[str, Any], str]]) -> str:
    t = Table(["ratio (median of rounds)", "wall", "CPU", "per round", "goal"])
    for name, r, goal in rows:
        t.add(name, f"{r['median']:.2f}", "-" if r["median_cpu"] is None else f"{r['median_cpu']:.2f}",
              " ".join(f"{x:.2f}" for x in r["per_round"]), goal)
    return t.render()


def indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


# -- modes -----------------------------------------------------------------------------------------
def mode_full(b: Bench, data: PeerData, repeat: int, sdp: bool = True) -> dict[str, Any]:
    base, other = b.base_name, b.other_name
    b.log(f"\n== full pipeline, fresh state: {repeat} round(s) of {base}, {other}{', SDP' if sdp else ''}, "
          "streamt run")
    groups: dict[str, list[Result]] = {base: [], other: [], **({"SDP": []} if sdp else {}), "streamt run": []}
    runners: dict[str, Callable[[], Result]] = {
        base: lambda: b.hand(data.root), other: lambda: b.hand(data.root, OTHER[b.baseline]),
        "SDP": lambda: b.sdp(data.root),
        "streamt run": lambda: b.streamt(data.root, b.new_project(data.root), expect_bad=data.malformed)}
    for i in range(1, repeat + 1):
        for name in groups:
            r = runners[name]()
            groups[name].append(r)
            b.show(f"round {i}", r)
    hand, ours = groups[base], groups["streamt run"]
    ratios = {"streamt_vs_hand": ratio(ours, hand), f"streamt_vs_hand_{OTHER[b.baseline]}": ratio(ours, groups[other]),
              f"hand_{OTHER[b.baseline]}_vs_hand": ratio(groups[other], hand)}
    rows = [(f"streamt / {base}", ratios["streamt_vs_hand"], "<= 1.10"),
            (f"streamt / {other}", ratios[f"streamt_vs_hand_{OTHER[b.baseline]}"], ""),
            (f"{other} / {base}", ratios[f"hand_{OTHER[b.baseline]}_vs_hand"], "")]
    if sdp:
        ratios["sdp_vs_hand"], ratios["streamt_vs_sdp"] = ratio(groups["SDP"], hand), ratio(ours, groups["SDP"])
        rows += [(f"SDP / {base}", ratios["sdp_vs_hand"], ""), ("streamt / SDP", ratios["streamt_vs_sdp"], "< 1.00")]
    b.log("\n" + indent(runner_table(groups)))
    b.log("\n" + indent(ratio_table(rows)))
    return {"baseline": b.baseline, "runners": {k: stats(v) for k, v in groups.items()}, "ratios": ratios}


def mode_warm(b: Bench, data: PeerData, repeat: int) -> dict[str, Any]:
    b.log(f"\n== warm: repeated `streamt run` on one project, its Spark Connect server up (`streamt server "
          f"start`), vs hand-written, {repeat} round(s)")
    project = b.new_project(data.root)
    first = b.streamt(data.root, project, "streamt run (first)", data.malformed)
    b.show("first", first)
    pid, waited = start_server(project)
    b.log(f"  `streamt server start` (pid {pid}) took {waited:.1f} s with its warm-up; CPU below = client tree + "
          "server")
    try:
        groups: dict[str, list[Result]] = {b.base_name: [], "streamt run (warm)": []}
        for i in range(1, repeat + 1):
            h = b.hand(data.root)
            groups[b.base_name].append(h)
            b.show(f"round {i}", h)
            o = b.streamt(data.root, project, "streamt run (warm)", data.malformed, pid, rebuild=True)
            groups["streamt run (warm)"].append(o)
            b.show(f"round {i}", o)
    finally:
        b.log(f"  server stopped: {stop_server(project)}")
    hand, warm = groups[b.base_name], groups["streamt run (warm)"]
    gaps = [h.run.seconds - o.run.seconds for h, o in zip(hand, warm, strict=True)]
    r = ratio(warm, hand)
    b.log("\n" + indent(runner_table(groups)))
    b.log("\n" + indent(ratio_table([(f"warm streamt / {b.base_name}", r, "")])))
    b.log(f"  {b.base_name} - warm streamt: median {median(gaps):.1f} s (per round "
          f"{' '.join(f'{g:.1f}' for g in gaps)}; goal >= 5 s); first run (embedded) "
          f"{first.run.seconds:.1f} s, `streamt server start` {waited:.1f} s")
    return {"first_run_s": round(first.run.seconds, 2), "server_start_s": round(waited, 2),
            "runners": {k: stats(v) for k, v in groups.items()}, "ratio_vs_hand": r,
            "hand_minus_warm_s": {"per_round": [round(g, 2) for g in gaps], "median": round(median(gaps), 2)}}


def mode_incremental(b: Bench, data: PeerData, repeat: int, server: bool, in_a_row: int = 1) -> dict[str, Any]:
    """Every run one-shot (the default); ``server``: the project's Connect server is started after the full
    run and the reruns connect to it. A hand-written job has no increments: its user reruns the whole job,
    so each round also runs both hand-written jobs on the +1 % data (their "rerun"). ``in_a_row`` > 1: that
    many +1 % reruns in a row, each after one more +1 % file (a server's steady state: warm code, the
    tables' logs already read), each checked against the baseline's run on the same files."""
    share = data.extra_orders / data.orders
    base, other = b.base_name, b.other_name
    how = ("the reruns go to the project's Spark server, started after the full run" if server
           else "embedded JVM per run (the default)")
    b.log(f"\n== incremental: full run, +{data.extra_orders:,} orders ({share:.1%}), rerun; {repeat} round(s), "
          f"fresh project and data copy each; {how}; {base} and {other} rerun whole on the +1 % data")
    if data.root not in b.reference:  # the expected outputs before the new file
        b.show("reference", b.hand(data.root))
    groups: dict[str, list[Result]] = {"streamt run (full)": [], "streamt run (+1 %)": [],
                                       "streamt run (no new data)": [], "streamt run --full-refresh": [],
                                       f"{base} on the +1 % data": [], f"{other} on the +1 % data": []}
    for i in range(1, repeat + 1):
        copy = data.linked_copy(b.work / "incr-data" / f"{i:02d}")
        project = b.new_project(copy)
        b.reference[copy] = b.reference[data.root]
        full = b.streamt(copy, project, "streamt run (full)", data.malformed)
        b.show(f"round {i}", full)
        data.add_extra(copy)
        del b.reference[copy]  # the baseline's run on the +1 % data gives the expected outputs after it
        for fmt, name in ((b.baseline, base), (OTHER[b.baseline], other)):
            h = b.hand(copy, fmt)
            b.show(f"round {i}", h)
            groups[f"{name} on the +1 % data"].append(h)
        bad = data.malformed + data.extra_malformed
        try:
            pid = start_server(project)[0] if server else None
            rerun = b.streamt(copy, project, "streamt run (+1 %)", bad, pid)
            b.show(f"round {i}", rerun)
            for nth in range(2, in_a_row + 1):  # later hours: one more +1 % file each, the baseline rerun first
                data.add_extra(copy, nth)
                bad += data.extra_malformed
                del b.reference[copy]
                b.show(f"round {i}", b.hand(copy, b.baseline))
                label = f"streamt run (+1 %, rerun {nth})"
                again = b.streamt(copy, project, label, bad, pid)
                b.show(f"round {i}", again)
                groups.setdefault(label, []).append(again)
            noop = b.streamt(copy, project, "streamt run (no new data)", bad, pid)
            b.show(f"round {i}", noop)
            rebuilt = b.streamt(copy, project, "streamt run --full-refresh", bad, pid, rebuild=True)
            b.show(f"round {i}", rebuilt)
        finally:
            if server:
                stop_server(project)
        for name, r in (("streamt run (full)", full), ("streamt run (+1 %)", rerun),
                        ("streamt run (no new data)", noop), ("streamt run --full-refresh", rebuilt)):
            groups[name].append(r)
    fulls, reruns = groups["streamt run (full)"], groups["streamt run (+1 %)"]
    noops = groups["streamt run (no new data)"]
    hands, others = groups[f"{base} on the +1 % data"], groups[f"{other} on the +1 % data"]
    ratios = {"rerun_vs_full": ratio(reruns, fulls), "rerun_vs_hand": ratio(reruns, hands),
              f"rerun_vs_hand_{OTHER[b.baseline]}": ratio(reruns, others),
              "rerun_vs_rebuild_same_jvm": ratio(reruns, groups["streamt run --full-refresh"]),
              "noop_vs_full": ratio(noops, fulls), "noop_vs_hand": ratio(noops, hands),
              "full_vs_hand": ratio(fulls, hands)}
    later = {k: v for k, v in groups.items() if k.startswith("streamt run (+1 %, rerun ")}
    for label, runs in later.items():
        ratios[f"rerun_{label.split()[-1].rstrip(')')}_vs_full"] = ratio(runs, fulls)
    b.log("\n" + indent(runner_table(groups)))
    b.log("\n" + indent(ratio_table([
        ("rerun after +1 % / streamt full run", ratios["rerun_vs_full"], "<= 0.25"),
        *[(f"{label.removeprefix('streamt run (')[:-1]} / streamt full run", ratio(runs, fulls), "<= 0.25")
          for label, runs in later.items()],
        (f"rerun after +1 % / {base} (rerun whole)", ratios["rerun_vs_hand"], ""),
        (f"rerun after +1 % / {other} (rerun whole)", ratios[f"rerun_vs_hand_{OTHER[b.baseline]}"], ""),
        ("rerun after +1 % / --full-refresh", ratios["rerun_vs_rebuild_same_jvm"], ""),
        ("rerun, no new data / streamt full run", ratios["noop_vs_full"], ""),
        (f"rerun, no new data / {base}", ratios["noop_vs_hand"], ""),
        (f"streamt full run / {base} on +1 % data", ratios["full_vs_hand"], "")])))
    b.log(f"  rerun with no new data: median {median([r.run.seconds for r in noops]):.1f} s "
          f"(per round {' '.join(f'{r.run.seconds:.1f}' for r in noops)})")
    return {"baseline": b.baseline, "new_orders": data.extra_orders, "share": round(share, 4), "server": server,
            "runners": {k: stats(v) for k, v in groups.items()}, "ratios": ratios}


# -- main ------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--orders", type=int, default=None, help="orders to generate (default 2,000,000; --quick 100,000)")
    ap.add_argument("--customers", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--repeat", type=int, default=None, help="rounds per mode (default 3; --quick 1)")
    ap.add_argument("--quick", action="store_true", help="smoke mode: 100,000 orders, 1 round")
    ap.add_argument("--full", action="store_true", help="hand-written vs SDP vs streamt, fresh state (default)")
    ap.add_argument("--warm", action="store_true", help="streamt run on a running Spark Connect server vs hand-written")
    ap.add_argument("--incremental", action="store_true", help="rerun after +1 %% orders vs the full run")
    ap.add_argument("--all", action="store_true", help="--full --warm --incremental")
    ap.add_argument("--as-stream", action="append", default=[], metavar="MODEL",
                    help="run MODEL as `materialized: stream` in streamt's project (repeatable; e.g. orders_clean, "
                         "so a rerun reads only new files); hand-written and SDP are unchanged")
    ap.add_argument("--in-a-row", type=int, default=1, metavar="N",
                    help="--incremental: N reruns in a row, each after one more +1 %% file (with --on-server: "
                    "the server's steady state)")
    ap.add_argument("--on-server", action="store_true", help="--incremental with the reruns on the project's "
                    "Spark Connect server (`streamt server start` after the full run)")
    ap.add_argument("--baseline", choices=("delta", "parquet"), default="delta",
                    help="the hand-written job the ratios are taken against: benchmarks/handwritten_delta.py "
                         "(Delta tables, the default: streamt's tables are Delta) or the peer folder's handwritten.py "
                         "(Parquet); the other one is run too and shown beside it")
    ap.add_argument("--streamt-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting added to streamt's project copies only (repeatable), to measure what a "
                         "setting would buy; the hand-written jobs and SDP are unchanged")
    ap.add_argument("--key", action="append", default=[], metavar="MODEL=COLUMNS",
                    help="give a table model of streamt's project a `key:` (repeatable; e.g. orders_clean=order_id): "
                         "its build checks one row per key and its reruns upsert with Delta's MERGE instead of "
                         "appending; the hand-written jobs and SDP are unchanged")
    ap.add_argument("--no-sdp", action="store_true", help="--full without Spark Declarative Pipelines")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON at the end (progress on stderr)")
    ap.add_argument("--peer-dir", type=Path, default=None, help="the peer-bench folder (default: shared/peer-bench "
                    "next to the repository or a parent; or $PEER_BENCH)")
    ap.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: a new temp folder, "
                    "deleted at the end unless given)")
    args = ap.parse_args(argv)
    orders = args.orders or (100_000 if args.quick else 2_000_000)
    repeat = args.repeat or (1 if args.quick else 3)
    full = args.full or args.all or not (args.warm or args.incremental)
    stream = sys.stderr if args.json else sys.stdout

    def log(text: str) -> None:
        print(text, file=stream, flush=True)

    peer = peer_dir(args.peer_dir)
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="streamt-peers-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    log(f"workdir {work}\npeer pipeline {peer}\n{machine_note()}")
    venv = ensure_pipelines() if full and not args.no_sdp else Path(sys.prefix)
    data = cached_data(peer, orders, args.customers, args.seed, log)
    log(f"data {data.root}: {data.orders:,} orders ({data.malformed:,} malformed lines), {args.customers:,} customers")
    conf = tuple(tuple(kv.split("=", 1)) for kv in args.streamt_conf)
    if any(len(kv) != 2 for kv in conf):
        ap.error("--streamt-conf takes KEY=VALUE")
    keys = tuple(tuple(kv.split("=", 1)) for kv in args.key)
    if any(len(kv) != 2 for kv in keys):
        ap.error("--key takes MODEL=COLUMNS")
    bench = Bench(peer, work, venv, log, as_stream=tuple(args.as_stream), baseline=args.baseline,
                  streamt_conf=conf, keys=keys)
    if keys:
        log("streamt project: " + ", ".join(f"{m} key: {k}" for m, k in keys))
    if conf:
        log("streamt project: " + ", ".join(f"{k}={v}" for k, v in conf))
    if args.as_stream:
        log(f"streamt project: {', '.join(args.as_stream)} as materialized: stream")
    report: dict[str, Any] = {"baseline": args.baseline, "orders": orders, "customers": args.customers,
                              "repeat": repeat, "as_stream": list(args.as_stream), "streamt_conf": dict(conf),
                              "keys": dict(keys),
                              "machine": machine_note(), "malformed_lines": data.malformed}
    try:
        if full:
            report["full"] = mode_full(bench, data, repeat, sdp=not args.no_sdp)
        if args.warm or args.all:
            report["warm"] = mode_warm(bench, data, repeat)
        if args.incremental or args.all:
            report["incremental"] = mode_incremental(bench, data, repeat, server=args.on_server,
                                                     in_a_row=args.in_a_row)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    report["problems"] = bench.problems
    log("\n== correctness: " + (f"every run wrote the same rows and sums as {bench.base_name} on the same data; "
                                "quarantine = malformed lines" if not bench.problems else "DIFFERENCES"))
    for p in bench.problems:
        log(f"  {p}")
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    return 1 if bench.problems else 0


if __name__ == "__main__":
    sys.exit(main())
