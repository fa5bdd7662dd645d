"""Last run of each model and latest test results for the docs, read with the same code as
``streamt status`` (:mod:`dagster_streamt.dagster.run_history`).

Dagster is imported only when the project has an instance with something in it, so generating the
docs of a project that never ran stays fast.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..core.loaded import LoadedProject
from ..instance_location import instance_dir


@dataclass(frozen=True)
class RunState:
    instance: str  # where the history was read, for the page's footer
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # model -> last run
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)  # test -> latest result
    error: str = ""  # the instance could not be read: said on the page, never a traceback


def read_run_state(loaded: LoadedProject) -> RunState | None:
    """None when the project has no Dagster instance (it never ran)."""
    root, where = loaded.project.root, instance_dir(loaded.project.root)
    if not os.environ.get("DAGSTER_HOME") and not (where.is_dir() and any(where.iterdir())):
        return None
    label = where.relative_to(root).as_posix() if where.is_relative_to(root) else str(where)
    try:
        from ..dagster.code_location import code_location
        from ..dagster.instance import project_instance
        from ..dagster.run_history import last_checks, last_runs

        keys = code_location(loaded).keys  # the keys the runs were recorded under
        with project_instance(loaded.project.root) as instance:
            runs = last_runs(loaded, instance, keys)
            checks = last_checks(loaded, instance, keys)
    except Exception as exc:  # a broken or newer-schema instance must not stop the docs
        return RunState(label, error=f"{type(exc).__name__}: {exc}".strip())
    return RunState(
        label,
        runs={name: {"status": r.status, "started": r.started.isoformat(), "finished": r.finished.isoformat(),
                     "seconds": round(r.seconds, 3), "rows": r.rows, "run_id": r.run_id, "error": r.error}
              for name, r in runs.items()},
        checks={c.test: {"passed": c.passed, "severity": c.severity, "at": c.at.isoformat() if c.at else None}
                for c in checks if c.at is not None or c.passed is not None},
    )
