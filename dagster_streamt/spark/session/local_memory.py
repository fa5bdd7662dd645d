"""How much memory a local Spark session gets, and how much of Spark's bookkeeping it keeps.

In local mode the driver JVM is the whole engine: every task runs in its heap. Spark's default of
1g (``spark.driver.memory``) is sized for a driver that only plans: Delta Lake's log replays, the
streaming sources' file logs and the queries' plans share that heap, and a long process (a
project's Connect server, a test session, a run of many models) runs out of it (measured: the
suite's shared session died of ``OutOfMemoryError: Java heap space`` after ~1,100 tests). A local
session gets what the JVM itself would take without ``-Xmx``: a quarter of the machine's memory
(or of its container's limit), at least Spark's 1g. ``runtime.spark.conf`` still wins.

Spark also keeps a record of the last 1,000 SQL queries, jobs and stages and 100,000 tasks for
its web UI, plans included: with the UI off (the default here) nobody can read them, so they are
kept short.
"""

from __future__ import annotations

import os
from pathlib import Path

SPARK_DEFAULT_MB = 1024
# Spark's records for the web UI; with the UI off, a few are enough for a listener to finish its work.
NO_UI_RETENTION = {
    "spark.sql.ui.retainedExecutions": "50",
    "spark.ui.retainedJobs": "50",
    "spark.ui.retainedStages": "50",
    "spark.ui.retainedTasks": "1000",
    "spark.ui.dagGraph.retainedRootRDDs": "50",
}
_CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


def machine_memory_bytes() -> int | None:
    """Physical memory, or the container's limit when it is lower; None when unknown."""
    try:
        total: int | None = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = None
    for path in _CGROUP_LIMITS:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit() and (total is None or int(text) < total):
            total = int(text)
    return total


def local_driver_memory(total_bytes: int | None = None) -> str:
    """``spark.driver.memory`` for a local session: a quarter of ``total_bytes`` (default: this
    machine's), at least Spark's 1g, in whole megabytes.

    >>> local_driver_memory(24 * 1024**3)
    '6144m'
    >>> local_driver_memory(2 * 1024**3)
    '1024m'
    """
    total = machine_memory_bytes() if total_bytes is None else total_bytes
    quarter = total // 4 // (1024 * 1024) if total else 0
    return f"{max(SPARK_DEFAULT_MB, quarter)}m"
