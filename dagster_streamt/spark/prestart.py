"""Start the run's JVM while the CLI is still importing Dagster and opening its instance.

An embedded Spark session takes seconds to start, mostly one busy thread; Dagster's imports and
instance take about as long on the other core. When the session the run will ask for is known
before Dagster is loaded (the default code location binds the default Spark resource, so the
project's ``runtime.spark`` decides), a background thread creates it; the run's own
:func:`.session.create_session` then gets the same session from ``getOrCreate`` (which waits for a
start in progress). Any failure is left for that call to report.
"""

from __future__ import annotations

import threading

from ..spec.project import Project
from .settings import SparkSettings


def prestart(project: Project) -> threading.Thread | None:
    """Begin starting the embedded (or cluster) session of ``project``; Spark Connect is left alone
    (connecting is fast, and a server it would start outlives the run)."""
    settings = SparkSettings.from_project(project)
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
