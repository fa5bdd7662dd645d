"""Start the run's Spark while the CLI is still importing Dagster and opening its instance.

An embedded session (or, on a project's first run, its Connect server) takes seconds to start,
mostly one busy thread; Dagster's imports and instance take about as long on the other core. When
the session the run will ask for is known before Dagster is loaded (the default code location
binds the default Spark resource, so the project's ``runtime.spark`` decides), a background thread
creates it; the run's own :func:`.session.create_session` then gets the same session from
``getOrCreate`` (which waits for a start in progress). Any failure is left for that call to report.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from ...spec.project import Project
from .jit import Jit
from .settings import SparkSettings


def prestart(project: Project, jit: Jit = "auto") -> threading.Thread | None:
    """Begin starting the session of ``project``: its embedded JVM (with the compilers ``jit`` chose for
    the run, see :mod:`.jit`), or its own Connect server (see :mod:`.project_server`) and the client; a
    given ``remote`` or fixed-port server is left alone."""
    settings = replace(SparkSettings.from_project(project), jit=jit)
    if settings.mode == "connect":
        return None

    def start() -> None:
        from .session import create_session

        try:
            create_session(project, settings)
        except Exception:  # the run's own create_session reports it, with its context
            return

    thread = threading.Thread(target=start, name="streamt-spark-prestart", daemon=True)
    thread.start()
    return thread
