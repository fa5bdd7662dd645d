"""What Delta Lake adds to a Spark session's start and to a table's first write (issue 25).

Usage: ``python benchmarks/bench_delta_startup.py [--repeat 3]``

Each measurement is a fresh process (a session starts once per process), alternating the two sides in one
run: the embedded session with the package's conf as it is (Delta's jars, SQL extension and catalog) and
with those three settings taken out; each side then writes one tiny table, as Delta and as Parquet. Prints
the medians and the ratios. The class archive (``jvm_archive.py``) is keyed by the classpath, so the first
process of each side dumps its own archive: one warm-up per side is not counted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DELTA_KEYS = ("spark.sql.extensions", "spark.sql.catalog.spark_catalog")


def child(delta: bool, folder: str) -> None:
    """One measurement: session start, first job, first table write."""
    from dagster_streamt.jars import sets
    from dagster_streamt.jars.fetch import jars_for
    from dagster_streamt.spark.session.session import _embedded
    from dagster_streamt.spark.session.settings import SparkSettings, session_conf
    from dagster_streamt.spec.loader import load_project

    project, _ = load_project(Path(folder))
    assert project is not None
    settings = SparkSettings.from_project(project, master="local[2]")
    conf = session_conf(project, settings)
    if not delta:
        ours = {str(j) for j in jars_for(sets.delta())}
        jars = [j for j in conf.get("spark.jars", "").split(",") if j and j not in ours]
        conf = {k: v for k, v in conf.items() if k not in (*DELTA_KEYS, "spark.jars")}
        if jars:
            conf["spark.jars"] = ",".join(jars)
    start = time.perf_counter()
    spark = _embedded(settings, conf)
    up = time.perf_counter()
    spark.range(10).count()
    job = time.perf_counter()
    spark.range(1000).write.format("delta" if delta else "parquet").save(str(Path(folder) / f"t{time.time_ns()}"))
    wrote = time.perf_counter()
    spark.stop()
    print(json.dumps({"session": up - start, "first_job": job - up, "first_write": wrote - job}))


def measure(delta: bool, folder: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", "delta" if delta else "plain", folder],
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        child(args.child[0] == "delta", args.child[1])
        return
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "stream_project.yml").write_text("project: {name: delta_startup}\n", encoding="utf-8")
        runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
        for i in range(args.repeat + 1):
            for delta in (False, True):
                got = measure(delta, tmp)
                if i:  # the first of each side writes its class archive
                    runs[delta].append(got)
        for key in ("session", "first_job", "first_write"):
            plain = statistics.median(r[key] for r in runs[False])
            delta_s = statistics.median(r[key] for r in runs[True])
            print(f"{key:12s} without Delta {plain:6.2f} s   with Delta {delta_s:6.2f} s   "
                  f"ratio {delta_s / plain:4.2f}")


if __name__ == "__main__":
    main()
