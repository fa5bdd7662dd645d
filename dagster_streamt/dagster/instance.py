"""The project's Dagster instance: ``$DAGSTER_HOME`` when set (whatever its ``dagster.yaml`` says:
PostgreSQL storage in production, with ``dagster-streamt[postgres]``), else
``<project>/.streamt/dagster`` (SQLite storage), the same folder the repo's dagster.yaml points
``dagster dev`` at."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import dagster as dg

from ..instance_location import INSTANCE_DIR, instance_dir

__all__ = ["INSTANCE_DIR", "instance_dir", "project_instance"]

_DAGSTER_YAML = """\
# Written by dagster-streamt: this project's Dagster instance (SQLite storage, no telemetry).
telemetry:
  enabled: false
run_coordinator:
  module: dagster
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 2
"""


def project_instance(project_root: Path) -> dg.DagsterInstance:
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    base = instance_dir(project_root)
    base.mkdir(parents=True, exist_ok=True)
    # Two `streamt run` started at once on a new project would both create the SQLite schemas ("table
    # already exists"): the first creates them, the second waits and opens them.
    with open(base / ".init.lock", "a") as lock:  # flock (not spark.locks: no pyspark import for `status`)
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if not (base / "dagster.yaml").exists():
            (base / "dagster.yaml").write_text(_DAGSTER_YAML)
        return dg.DagsterInstance.from_config(str(base))
