"""The project's Dagster instance: ``$DAGSTER_HOME`` when set (whatever its ``dagster.yaml`` says:
PostgreSQL storage in production, with ``dagster-streamt[postgres]``), else
``<project>/.streamt/dagster`` (SQLite storage), the same folder the repo's dagster.yaml points
``dg dev`` at."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import dagster as dg

from ..instance_location import instance_dir

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


class InstanceError(RuntimeError):
    """The instance's dagster.yaml cannot be used as it is: the message says what to install or fix."""


def project_instance(project_root: Path) -> dg.DagsterInstance:
    """The instance every command records to and reads from (what ``dagster dev`` / ``dg dev`` with
    the same ``DAGSTER_HOME`` show)."""
    home = os.environ.get("DAGSTER_HOME")
    if home:
        check_postgres_scheme(Path(home) / "dagster.yaml")
        try:
            return dg.DagsterInstance.get()
        except Exception as exc:
            missing = next((m for m in ("dagster_postgres", "dagster_mysql") if m in str(exc)), None)
            if missing is None:
                raise
            extra = "postgres" if missing == "dagster_postgres" else None
            fix = f"pip install 'dagster-streamt[{extra}]'" if extra else f"pip install {missing.replace('_', '-')}"
            raise InstanceError(f"{Path(home) / 'dagster.yaml'} uses {missing.split('_')[1]} storage but {missing} "
                                f"is not installed: {fix}") from None
    base = instance_dir(project_root)
    base.mkdir(parents=True, exist_ok=True)
    # Two `streamt run` started at once on a new project would both create the SQLite schemas ("table
    # already exists"): the first creates them, the second waits and opens them.
    with open(base / ".init.lock", "a") as lock:  # flock (not spark.locks: no pyspark import for `status`)
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if not (base / "dagster.yaml").exists():
            (base / "dagster.yaml").write_text(_DAGSTER_YAML)
        return dg.DagsterInstance.from_config(str(base))


def check_postgres_scheme(config: Path) -> None:
    """dagster-postgres 0.29 speaks psycopg2, but SQLAlchemy 2.1 opens a bare ``postgresql://`` with
    psycopg 3 (missing, or failing on its first NOTIFY). The ``postgres`` extra keeps SQLAlchemy below
    2.1; when 2.1 is installed anyway, say so before the first run, with the fix."""
    import sqlalchemy
    import yaml

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return  # Dagster reports an unreadable dagster.yaml itself
    pg = (data.get("storage") or {}).get("postgres") if isinstance(data, dict) else None
    if not isinstance(pg, dict) or tuple(int(x) for x in sqlalchemy.__version__.split(".")[:2]) < (2, 1):
        return
    url, db = pg.get("postgres_url"), pg.get("postgres_db")
    scheme = url.split("://", 1)[0] if isinstance(url, str) else \
        str(db.get("scheme", "postgresql")) if isinstance(db, dict) else "postgresql+"
    if "+" not in scheme:
        where = "the postgres_url to postgresql+psycopg2://..." if isinstance(url, str) else \
            "`scheme: postgresql+psycopg2` under storage.postgres.postgres_db"
        raise InstanceError(f"{config}: SQLAlchemy {sqlalchemy.__version__} opens {scheme}:// with psycopg 3, "
                            f"which dagster-postgres does not support: set {where}, or "
                            "pip install 'dagster-streamt[postgres]' (it keeps SQLAlchemy below 2.1)")
