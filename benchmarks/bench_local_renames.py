"""Warm local runs with the package's rename settings against Spark's and Delta's own defaults.

Usage: ``flock /tmp/spark.lock python3 benchmarks/bench_local_renames.py [--projects 6] [--forks]``

Without Hadoop's native library, a FileContext rename on the local disk forks ``readlink`` to check
the destination. Spark's default checkpoint manager and Delta's default log store (HDFSLogStore)
rename through FileContext. ``settings.NO_FORK_RENAMES`` switches both to their FileSystem versions.
This script measures the ratio on one small pipeline, in one process per side:

- a stream model over a JSON source, with two table models over it (an aggregation and a filter);
- each project runs three times in a warm session, with a new input file before each rerun.

Per side it reports the median time of the three runs of a project. Both sides must end with the
same rows. ``--forks`` also counts the processes each side's JVM starts during one more project,
with ``strace``; that project is slow under strace and is not timed.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SPARK_DEFAULTS = {  # what Spark 4 and Delta use for local paths when nothing is set
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing.FileContextBasedCheckpointFileManager",
    "spark.delta.logStore.file.impl": "io.delta.storage.HDFSLogStore",
}
CONFIG: dict[str, Any] = {
    "project": {"name": "renames"},
    "sources": [{"name": "raw", "format": "json", "path": "in",
                 "columns": [{"name": "id", "type": "bigint"}, {"name": "c", "type": "string"}]}],
    "models": [
        {"name": "clean", "materialized": "stream", "sql": 'SELECT id, c FROM {{ source("raw") }} WHERE id >= 0'},
        {"name": "agg", "materialized": "table", "sql": 'SELECT c, count(*) AS n FROM {{ ref("clean") }} GROUP BY c'},
        {"name": "t2", "materialized": "table", "sql": 'SELECT id, c FROM {{ ref("clean") }} WHERE id > 1'},
    ],
}


def _project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "stream_project.yml").write_text(yaml.safe_dump(CONFIG, sort_keys=False), encoding="utf-8")
    (root / "in").mkdir()
    (root / "in" / "a.json").write_text("".join(json.dumps({"id": k, "c": str(k % 3)}) + "\n" for k in range(5)))
    return root


def child(side: str, folder: Path, projects: int, forks: bool) -> None:
    from dagster_streamt.api import load_graph, load_or_raise
    from dagster_streamt.spark import run_models
    from dagster_streamt.spark.session.session import create_session, stop_session
    from dagster_streamt.spark.session.settings import SparkSettings
    from dagster_streamt.spark.storage.warehouse import Warehouse

    session_project = load_or_raise(_project(folder / "session")).project
    conf = SPARK_DEFAULTS if side == "spark_defaults" else {}
    spark = create_session(session_project, SparkSettings.from_project(session_project, master="local[2]", conf=conf))

    def one(i: int) -> tuple[float, list[Any]]:
        root = _project(folder / f"p{i}")
        project = load_or_raise(root).project
        plan = load_graph(root).run_plan(project.models)
        start = time.monotonic()
        for j in range(3):
            for result in run_models(spark, project, plan.order, plan.levels, plan.upstream):
                assert result.status == "success", result
            (root / "in" / f"b{j}.json").write_text(
                "".join(json.dumps({"id": k, "c": "x"}) + "\n" for k in range(5 + 3 * j, 8 + 3 * j)))
        wall = time.monotonic() - start
        table = spark.read.format("delta").load(str(Warehouse.for_project(project).data_dir("agg")))
        return wall, sorted(tuple(r) for r in table.collect())

    one(0)  # warm-up: the JIT, Delta's first commit
    walls, rows = [], None
    for i in range(1, projects + 1):
        wall, rows = one(i)
        walls.append(wall)
    counted: dict[str, int] = {}
    if forks:
        pid = spark._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
        trace = folder / "strace.txt"
        tracer = subprocess.Popen(["strace", "-f", "-q", "-e", "trace=execve", "-o", str(trace), "-p", str(pid)])
        time.sleep(1)
        one(projects + 1)
        tracer.terminate()
        tracer.wait()
        names = (line.split('execve("')[1].split('"')[0].rsplit("/", 1)[-1]
                 for line in trace.read_text().splitlines() if 'execve("' in line and "= 0" in line)
        counted = dict(sorted(collections.Counter(n for n in names if n != "jspawnhelper").items()))
    stop_session(spark)
    print(json.dumps({"side": side, "walls": walls, "rows": rows, "forks": counted}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=6)
    parser.add_argument("--forks", action="store_true", help="count the JVM's child processes (needs strace)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.projects, args.forks)
        return
    out: dict[str, dict[str, Any]] = {}
    for side in ("package", "spark_defaults"):
        folder = Path(tempfile.mkdtemp(prefix=f"renames-{side}-"))
        try:
            cmd = [sys.executable, __file__, "--projects", str(args.projects), "--child", side, str(folder)]
            proc = subprocess.run(cmd + (["--forks"] if args.forks else []), capture_output=True, text=True,
                                  check=True)
            out[side] = json.loads(proc.stdout.strip().splitlines()[-1])
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if out["package"]["rows"] != out["spark_defaults"]["rows"]:
        sys.exit(f"the sides' tables differ: {out['package']['rows']} != {out['spark_defaults']['rows']}")
    for side, res in out.items():
        print(f"{side:15} median {statistics.median(res['walls']):6.2f} s per project of 3 runs "
              f"({', '.join(f'{w:.2f}' for w in res['walls'])})" + (f"; forks {res['forks']}" if args.forks else ""))
    ratio = statistics.median(out["package"]["walls"]) / statistics.median(out["spark_defaults"]["walls"])
    print(f"package / spark_defaults: {ratio:.2f}x")


if __name__ == "__main__":
    main()
