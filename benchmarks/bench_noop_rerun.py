"""A rerun with nothing new against the floor of any Delta job on this machine (issue 39).

In one run of this script, alternating:

1. the **bare Delta job**: a fresh process that starts a local Spark session configured as the
   package's local sessions are (Delta's jars and extension, the same memory and snapshot settings),
   writes one row as a Delta table and reads it back. No peer can learn that nothing changed for less:
   each starts Spark to find out;
2. **Dagster's own floor**: a fresh process that runs 5 trivial assets with one check each through
   Dagster in-process on a SQLite instance (what any run recorded in the UI costs, with no work);
3. the example project (``--orders`` orders, in a scratch copy): a first ``streamt run`` from fresh
   state, then ``streamt run`` again with no new data (the **no-op rerun**), whole processes timed
   from the outside.

All three run the package as users install it: this tree built as a wheel and installed into a new venv
(``bench_util.installed_streamt``), with its bytecode compiled by pip. ``--checkout`` times the editable
checkout instead, which under ``PYTHONDONTWRITEBYTECODE`` compiles the package again in every process.

Prints the medians, the ratio no-op / bare (goal: at most 0.2) and no-op / Dagster's floor, every
process each no-op rerun's tree held (a ``java`` there would be a JVM), and each command's own
``time:`` line (where its time went).

    flock /tmp/spark.lock python3 benchmarks/bench_noop_rerun.py                 # 50,000 orders, 3 rounds
    flock /tmp/spark.lock python3 benchmarks/bench_noop_rerun.py --rounds 1 --orders 5000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import (
    copy_project,
    generate,
    installed_streamt,
    machine_note,
    median,
    reset_state,
    streamt_cmd,
    timed_run,
)

BARE = """
import sys, time
from pathlib import Path
from dagster_streamt.spark.session.session import _embedded
from dagster_streamt.spark.session.settings import SparkSettings, session_conf
from dagster_streamt.spec.loader import load_project

folder = Path(sys.argv[1])
project, _ = load_project(folder)
settings = SparkSettings.from_project(project)
spark = _embedded(settings, session_conf(project, settings))
path = str(folder / f"t{time.time_ns()}")
spark.createDataFrame([(1, "one")], "id bigint, name string").write.format("delta").save(path)
assert spark.read.format("delta").load(path).collect()[0]["name"] == "one"
spark.stop()
"""


DAGSTER = """
import sys
import dagster as dg

def asset(name):
    @dg.asset(name=name, check_specs=[dg.AssetCheckSpec("ok", asset=name)])
    def _asset():
        yield dg.MaterializeResult(metadata={"rows": 0})
        yield dg.AssetCheckResult(passed=True)
    return _asset

defs = dg.Definitions(assets=[asset(f"m{i}") for i in range(5)])
instance = dg.DagsterInstance.from_config(sys.argv[1])
quiet = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}  # as streamt run's
assert defs.resolve_implicit_global_asset_job_def().execute_in_process(instance=instance, run_config=quiet).success
"""


def time_line(stdout: str) -> str:
    return next((ln for ln in stdout.splitlines() if ln.startswith("time: ")), "(no time line)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--orders", type=int, default=50_000)
    parser.add_argument("--checkout", action="store_true", help="time the editable checkout, not an installed wheel")
    args = parser.parse_args()
    print(machine_note())
    with tempfile.TemporaryDirectory() as tmp:
        if args.checkout:
            cmd, python = streamt_cmd(), sys.executable
        else:
            bin_ = installed_streamt(Path(tmp) / "venv")
            cmd, python = [str(bin_ / "streamt")], str(bin_ / "python")
        print(f"package: {'the checkout' if args.checkout else 'this tree installed from its wheel'} ({cmd[0]})")
        bare_dir = Path(tmp) / "bare"
        bare_dir.mkdir()
        (bare_dir / "stream_project.yml").write_text("project: {name: bare_delta}\n", encoding="utf-8")
        project = copy_project(Path(tmp) / "shop", with_tests=True)
        generate(project / "data", args.orders, 1)
        instance = Path(tmp) / "dagster"
        instance.mkdir()
        (instance / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
        bare_s: list[float] = []
        floor_s: list[float] = []
        noop_s: list[float] = []
        first_line = noop_line = ""
        timed_run([python, "-c", BARE, str(bare_dir)], cwd=Path(tmp))  # warm-up: the class archive of this classpath
        for i in range(args.rounds):
            bare = timed_run([python, "-c", BARE, str(bare_dir)], cwd=Path(tmp))
            bare_s.append(bare.seconds)
            floor = timed_run([python, "-c", DAGSTER, str(instance)], cwd=Path(tmp))
            floor_s.append(floor.seconds)
            reset_state(project)
            first = timed_run([*cmd, "run", "-p", str(project)], env={"DAGSTER_HOME": ""}, cwd=Path(tmp))
            time.sleep(1)
            noop = timed_run([*cmd, "run", "-p", str(project)], env={"DAGSTER_HOME": ""}, cwd=Path(tmp))
            noop_s.append(noop.seconds)
            first_line, noop_line = time_line(first.stdout), time_line(noop.stdout)
            print(f"round {i + 1}: bare Delta job {bare.seconds:5.1f} s | Dagster's floor {floor.seconds:4.1f} s | "
                  f"first run {first.seconds:5.1f} s | "
                  f"no-op rerun {noop.seconds:5.1f} s, processes: {', '.join(sorted(set(noop.processes)))}")
            if "java" in noop.processes:
                print("  the no-op rerun's process tree held a JVM")
        print(f"\nfirst run:   {first_line}")
        print(f"no-op rerun: {noop_line}")
        b, d, n = median(bare_s), median(floor_s), median(noop_s)
        print(f"\nmedian of {args.rounds}: bare Delta job {b:.1f} s, Dagster's floor {d:.1f} s, no-op rerun {n:.1f} s: "
              f"{n / b:.2f}x the bare Delta job (goal <= 0.20), {n / d:.2f}x Dagster's floor")


if __name__ == "__main__":
    main()
