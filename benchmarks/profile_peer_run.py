"""Where the time of one fresh ``streamt run`` of the peer pipeline goes (issue 14, goal 4), measured
without changing dagster_streamt: this script runs the CLI in a child process that wraps the main
phases (project load, definitions build, Dagster instance, Spark session, each model's input
registration, quarantine pass, stored-row counts, table write, registry write, Dagster event writes,
OpenLineage emission) with timers, and with Spark's event log on (every SQL execution and job with its
times, model pool and plan). Times are seconds from the moment the process was started.

    flock /tmp/spark.lock python benchmarks/profile_peer_run.py                  # phases + Spark jobs
    flock /tmp/spark.lock python benchmarks/profile_peer_run.py --importtime     # + python -X importtime
    flock /tmp/spark.lock python benchmarks/profile_peer_run.py --py-spy         # + py-spy speedscope profile

Data: ``peer_data.cached_data`` (``--orders``, default 2,000,000), a fresh project copy each time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_data import cached_data, peer_dir

# (label, module, attribute[, class]) wrapped in the child; labels name what a user would call the phase
WRAPS: list[tuple[str, str, str, str | None]] = [
    ("project load", "dagster_streamt.cli.run_cmd", "load_or_exit", None),
    ("definitions build", "dagster_streamt.dagster.definitions", "build_definitions", None),
    ("Dagster instance open", "dagster_streamt.dagster.instance", "project_instance", None),
    ("Dagster execute_in_process", "dagster", "execute_in_process", "JobDefinition"),
    ("Dagster event write", "dagster", "handle_new_event", "DagsterInstance"),
    ("Spark session start (JVM)", "dagster_streamt.spark.session.session", "create_session", None),
    ("Spark session stop", "dagster_streamt.spark.session.session", "stop_session", None),
    ("render + translate SQL", "dagster_streamt.spark.tables.table", "render", None),
    ("register inputs", "dagster_streamt.spark.tables.table", "register", None),
    ("read source (plan)", "dagster_streamt.spark.sources.source_views", "read_source", None),
    ("quarantine query of a source", "dagster_streamt.spark.sources.source_views", "quarantine_source", None),
    ("settle input counts", "dagster_streamt.spark.sources.inputs", "settle", "InputStats"),
    ("stored input: registry + row count", "dagster_streamt.spark.sources.relations", "_register_model_batch", None),
    ("spark.sql (parse + analyze)", "pyspark.sql", "sql", "SparkSession"),
    ("refresh plan: inputs (snapshots, config hash)", "dagster_streamt.spark.tables.table", "_inputs", None),
    ("Delta log read (delta-rs)", "dagster_streamt.spark.tables.table", "current_commit", None),
    ("Delta log read (delta-rs)", "dagster_streamt.spark.delta.delta_table", "current_commit", None),
    ("table write (one Delta commit)", "dagster_streamt.spark.tables.table", "delta_write", None),
    ("aggregation state: full build", "dagster_streamt.spark.tables.table", "build_state", None),
    ("aggregation state: Delta write", "dagster_streamt.spark.delta.table_state", "_save", None),
    ("scratch Parquet stage", "dagster_streamt.spark.delta.table_state", "stage", None),
    ("scratch Parquet stage", "dagster_streamt.spark.tables.table", "stage", None),
    ("aggregation state: new DISTINCT pairs", "dagster_streamt.spark.delta.table_state", "_new_pairs", "Merge"),
    ("aggregation state: merge (pairs + MERGE)", "dagster_streamt.spark.delta.table_state", "apply", "Merge"),
    ("OpenLineage emit", "dagster_streamt.cli.dagster_exec", "_emit_lineage", None),
    ("Spark Connect RPC: analyze", "pyspark.sql.connect.client.core", "_analyze", "SparkConnectClient"),
    ("Spark Connect RPC: execute", "pyspark.sql.connect.client.core", "_execute_and_fetch", "SparkConnectClient"),
    ("Spark Connect RPC: config", "pyspark.sql.connect.client.core", "config", "SparkConnectClient"),
]

CHILD = r'''
import importlib, json, os, sys, threading, time
T0 = float(os.environ["PROFILE_T0"])
spans = [("interpreter start", "MainThread", 0.0, time.time() - T0, "")]
WRAPS = json.loads(os.environ["PROFILE_WRAPS"])

def detail(args):
    for a in args:
        if isinstance(a, str):
            return " ".join(a.split())[:60]
        name = getattr(a, "name", None)
        if isinstance(name, str):
            return name
        src = getattr(getattr(a, "source", None), "name", None)
        if isinstance(src, str):
            return src
    return ""

def wrap(label, fn):
    def timed(*args, **kwargs):
        start = time.time() - T0
        try:
            return fn(*args, **kwargs)
        finally:
            spans.append((label, threading.current_thread().name, start, time.time() - T0, detail(args)))
    timed.__wrapped__ = fn
    return timed

for label, module, attr, cls in WRAPS:
    mod = importlib.import_module(module)
    owner = getattr(mod, cls) if cls else mod
    if not hasattr(owner, attr):  # renamed since: say so rather than fail the profile
        print(f"profile: no {module}.{cls + '.' if cls else ''}{attr} to time ({label})", file=sys.stderr)
        continue
    setattr(owner, attr, wrap(label, getattr(owner, attr)))
# materializers are looked up in a dict filled at import: wrap the entries, one span per model
from dagster_streamt.spark import runner
for kind, fn in list(runner.MATERIALIZERS.items()):
    runner.MATERIALIZERS[kind] = wrap(f"model ({kind})", fn)
spans.append(("wrapping (profiler's own imports)", "MainThread", spans[0][3], time.time() - T0, ""))

from dagster_streamt.cli.main import cli  # not main(): it ends the process before the spans are saved
sys.argv = ["streamt", "run", "-p", sys.argv[1]]
code = 0
try:
    cli(prog_name="streamt")
except SystemExit as exc:
    code = exc.code or 0
finally:
    spans.append(("CLI main", "MainThread", spans[1][3], time.time() - T0, ""))
    with open(os.environ["PROFILE_OUT"], "w") as fh:
        json.dump(spans, fh)
sys.exit(code)
'''


def prepare(peer: Path, data: Path, work: Path, eventlog: Path) -> Path:
    project = work / "project"
    project.mkdir(parents=True)
    eventlog.mkdir(parents=True, exist_ok=True)
    text = (peer / "streamt_project.yml").read_text().replace("__DATA__", str(data))
    conf = (f"spark.eventLog.enabled: \"true\", spark.eventLog.dir: \"file://{eventlog}\", "
            "spark.eventLog.compress: \"false\", ")
    text = text.replace("conf: {", "conf: {" + conf, 1)
    assert "spark.eventLog.enabled" in text
    (project / "stream_project.yml").write_text(text)
    return project


def run_child(peer: Path, project: Path, work: Path, importtime: bool, pyspy: Path | None) -> dict[str, Any]:
    out = work / "spans.json"
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env.update(PROFILE_OUT=str(out), PROFILE_WRAPS=json.dumps(WRAPS))
    py = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", CHILD, str(project)]
    if pyspy is not None:
        py = ["py-spy", "record", "--idle", "--threads", "--nonblocking", "-r", "100", "-f", "speedscope",
              "-o", str(pyspy), "--", *py]
    t0 = time.time()
    env["PROFILE_T0"] = repr(t0)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(peer / "reap.py"), *py], env=env, cwd=work, capture_output=True,
                          text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"streamt run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return {"t0": t0, "wall": wall, "spans": json.loads(out.read_text()), "stdout": proc.stdout,
            "stderr": proc.stderr}


def incremental_child(peer: Path, project: Path, work: Path, extra: Path, importtime: bool,
                      pyspy: Path | None, server: bool = True) -> dict[str, Any]:
    """The full run, ``streamt server start`` (``server``), +1 % orders, then the profiled rerun on that
    server (else one-shot, its own JVM); the server is stopped at the end."""
    from bench_peers import server_env, start_server, stop_server
    from bench_util import streamt_cmd

    subprocess.run([*streamt_cmd(), "run", "-p", str(project)], env=server_env(), check=True,
                   capture_output=True)
    if server:
        start_server(project)
    shutil.copy(extra, project.parent / "data" / "orders" / extra.name)
    try:
        return run_child(peer, project, work, importtime, pyspy)
    finally:
        if server:
            stop_server(project)


# -- reports ---------------------------------------------------------------------------------------
def phase_report(res: dict[str, Any]) -> list[str]:
    spans = [tuple(s) for s in res["spans"]]
    lines = [f"{'phase':<40} {'thread':<12} {'start':>7} {'end':>7} {'seconds':>8}  detail"]
    total: dict[str, list[float]] = defaultdict(list)
    for label, thread, start, end, det in sorted(spans, key=lambda s: (s[2], s[0])):
        total[label].append(end - start)
        if label in ("Dagster event write", "spark.sql (parse + analyze)") or label.startswith("Spark Connect RPC"):
            continue  # many short calls: summed below
        lines.append(f"{label:<40} {thread[:12]:<12} {start:7.2f} {end:7.2f} {end - start:8.2f}  {det}")
    lines.append("")
    lines.append(f"{'phase (summed over calls)':<40} {'calls':>5} {'seconds':>8}")
    for label, xs in sorted(total.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"{label:<40} {len(xs):>5} {sum(xs):8.2f}")
    main_end = max(s[3] for s in spans if s[0] == "CLI main")
    lines.append(f"\nwhole process (reap.py: python + JVM exit) {res['wall']:.2f} s; python main returned at "
                 f"{main_end:.2f} s; after it (interpreter and JVM shutdown): {res['wall'] - main_end:.2f} s")
    return lines


def _plan_summary(plan: str) -> str:
    head = plan.strip().splitlines()[0] if plan.strip() else ""
    m = re.search(r"InsertIntoHadoopFsRelationCommand (\S+)", plan)
    if m:
        path = m.group(1)
        parts = [p for p in path.split("/") if p]
        return "write " + "/".join(parts[-2:]) if len(parts) >= 2 else "write " + path
    scans = sorted(set(re.findall(r"FileScan (\w+)", plan)))
    agg = "count" if re.search(r"count\(1\)|count\(", plan) else ""
    corrupt = "_corrupt_record" in plan
    return (f"{head[:40]} scan {','.join(scans) or '-'} {agg}{' corrupt-filter' if corrupt else ''}").strip()


def eventlog_report(eventlog: Path, t0: float, since: float | None = None) -> list[str]:
    files = sorted(p for p in eventlog.rglob("*") if p.is_file())
    if not files:
        return ["(no event log written)"]
    sql: dict[int, dict[str, Any]] = {}
    jobs: dict[int, dict[str, Any]] = {}
    app: dict[str, float] = {}
    for line in files[-1].read_text().splitlines():
        ev = json.loads(line)
        kind = ev.get("Event", "")
        if kind == "SparkListenerApplicationStart":
            app["start"] = ev["Timestamp"] / 1000 - t0
        elif kind == "SparkListenerApplicationEnd":
            app["end"] = ev["Timestamp"] / 1000 - t0
        elif kind.endswith("SQLExecutionStart"):
            sql[ev["executionId"]] = {"start": ev["time"] / 1000 - t0, "desc": ev.get("description", ""),
                                      "plan": _plan_summary(ev.get("physicalPlanDescription", "")), "jobs": []}
        elif kind.endswith("SQLExecutionEnd"):
            sql.setdefault(ev["executionId"], {"start": 0, "desc": "", "plan": "", "jobs": []})["end"] = \
                ev["time"] / 1000 - t0
        elif kind == "SparkListenerJobStart":
            props = ev.get("Properties", {})
            jobs[ev["Job ID"]] = {"start": ev["Submission Time"] / 1000 - t0,
                                  "pool": props.get("spark.scheduler.pool"),
                                  "desc": props.get("spark.job.description"),
                                  "sql": props.get("spark.sql.execution.id")}
        elif kind == "SparkListenerJobEnd":
            jobs.setdefault(ev["Job ID"], {})["end"] = ev["Completion Time"] / 1000 - t0
    for jid, job in jobs.items():
        if job.get("sql") is not None and int(job["sql"]) in sql:
            sql[int(job["sql"])]["jobs"].append(jid)
            sql[int(job["sql"])]["pool"] = job.get("pool")
    lines = [f"Spark application start (JVM up, SparkContext created) at {app.get('start', float('nan')):.2f} s, "
             f"end at {app.get('end', float('nan')):.2f} s",
             f"{'sql id':>6} {'start':>7} {'seconds':>8} {'jobs':>4}  {'pool (model)':<16} what"]
    busy = 0.0
    if since is not None:  # a long-lived server: only what this run did
        sql = {k: v for k, v in sql.items() if v["start"] >= since}
        jobs = {k: v for k, v in jobs.items() if v.get("start", -1.0) >= since}
    for sid, s in sorted(sql.items()):
        dur = s.get("end", s["start"]) - s["start"]
        busy += dur
        lines.append(f"{sid:>6} {s['start']:7.2f} {dur:8.2f} {len(s['jobs']):>4}  {s.get('pool') or '-'!s:<16} "
                     f"{s['plan']}" + (f"  [{' '.join(s['desc'].split())[:70]}]" if s.get("desc") else ""))
    spans = [(j["start"], j["end"]) for j in jobs.values() if "start" in j and "end" in j]
    lines.append(f"{len(sql)} SQL executions, {len(jobs)} jobs; sum of SQL execution times {busy:.2f} s; "
                 f"time with at least one job running {_union(spans):.2f} s")
    return lines


def _union(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for s, e in sorted(spans):
        if s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def importtime_report(stderr: str, top: int = 15) -> list[str]:
    """Cumulative import time of each top-level package imported at nesting level 0."""
    per_root: dict[str, float] = defaultdict(float)
    for line in stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) == 1:  # top level: one space after the bar
            per_root[m.group(4).split(".")[0]] += int(m.group(2)) / 1e6
    total = sum(per_root.values())
    lines = [f"imports at top level (cumulative, -X importtime): {total:.2f} s"]
    lines += [f"  {name:<28} {secs:6.2f} s" for name, secs in sorted(per_root.items(), key=lambda kv: -kv[1])[:top]]
    return lines


def pyspy_report(path: Path, needles: list[str]) -> list[str]:
    """Seconds of samples (all threads, idle included) whose stack holds each function name."""
    doc = json.loads(path.read_text())
    frames = [f["name"] for f in doc["shared"]["frames"]]
    lines = ["py-spy: seconds of samples whose stack holds ... (per thread; idle samples included)"]
    for prof in doc["profiles"]:
        unit = {"seconds": 1.0, "milliseconds": 1e-3, "microseconds": 1e-6}.get(prof.get("unit", "seconds"), 1.0)
        hits: dict[str, float] = defaultdict(float)
        total = 0.0
        for sample, weight in zip(prof["samples"], prof["weights"], strict=True):
            names = {frames[i] for i in sample}
            w = weight * unit
            total += w
            for n in needles:
                if n in names:
                    hits[n] += w
        if total < 0.5:
            continue
        lines.append(f"  {prof['name'][:60]}: {total:.1f} s sampled")
        lines += [f"    {n:<36} {hits[n]:6.2f} s" for n in needles if hits[n] >= 0.05]
    return lines


PYSPY_NEEDLES = ["_find_and_load", "load_or_exit", "build_definitions", "project_instance", "execute_in_process",
                 "create_session", "run_models", "materialize_table", "quarantine_source", "_register_model_batch",
                 "write_version", "handle_new_event", "_emit_lineage", "stop_session", "_summary"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--orders", type=int, default=2_000_000)
    ap.add_argument("--customers", type=int, default=100_000)
    ap.add_argument("--importtime", action="store_true", help="run the child with python -X importtime")
    ap.add_argument("--py-spy", action="store_true", help="run the child under py-spy (pip install py-spy)")
    ap.add_argument("--incremental", action="store_true", help="profile the rerun after +1 %% orders (the full run "
                    "first, then the rerun on the project's Spark server, as bench_peers.py --incremental)")
    ap.add_argument("--one-shot", action="store_true", help="--incremental with the rerun in its own JVM (the "
                    "default of `streamt run`) instead of on the project's Spark server")
    ap.add_argument("--peer-dir", type=Path, default=None)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    peer = peer_dir(args.peer_dir)
    data = cached_data(peer, args.orders, args.customers, 42)
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="streamt-profile-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    eventlog = work / "eventlog"
    pyspy = work / "pyspy.speedscope.json" if args.py_spy else None
    if args.incremental:
        project = prepare(peer, data.linked_copy(work / "data"), work, eventlog)
        res = incremental_child(peer, project, work, data.extra, args.importtime, pyspy, server=not args.one_shot)
    else:
        project = prepare(peer, data.root, work, eventlog)
        res = run_child(peer, project, work, args.importtime, pyspy)
    t0 = res["t0"]  # the spans' origin: the moment the process was started
    where = "its own JVM" if args.one_shot else "the project's warm Spark server"
    print(f"workdir {work}; {args.orders:,} orders" + (f" (the rerun after +1 % orders on {where})"
                                                       if args.incremental else "") + "\n")
    print("\n".join(phase_report(res)))
    print()
    print("\n".join(eventlog_report(eventlog, t0, since=0.0 if args.incremental and not args.one_shot else None)))
    if args.importtime:
        print()
        print("\n".join(importtime_report(res["stderr"])))
    if pyspy is not None and pyspy.is_file():
        print()
        print("\n".join(pyspy_report(pyspy, PYSPY_NEEDLES)))
    print("\nstreamt run's own output:\n" + "\n".join("  " + line for line in res["stdout"].splitlines()
                                                      if line.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
