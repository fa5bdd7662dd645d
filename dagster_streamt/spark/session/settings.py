"""How a run reaches Spark, as plain data: which master or Connect URL, and the session conf.

Shared by the embedded session and a locally started Spark Connect server, so both behave the
same; no pyspark import, so the Dagster resource and the CLI can describe a setup without a JVM.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...jars.sets import JarsUnavailable
from ...spec.models import ConnectServer
from ...spec.project import Project
from ..storage.paths import ProjectPaths
from .jit import Jit
from .local_memory import NO_UI_RETENTION, local_driver_memory
from .session_jars import session_jars

_LOCAL = re.compile(r"^local(?:\[(\*|\d+)(?:,\s*\d+)?\])?$")

# Local runs write stream checkpoints, state store files and Delta commits through Hadoop's
# FileSystem, not its FileContext. Both write a temporary file and rename it into place when the
# destination does not exist yet. On a local disk the FileContext checks that by forking ``readlink``
# (Hadoop without its native library), twice per rename: about 130 forks per run of a 3-model project.
# FileSystem checks with one ``stat`` call instead. The guarantee is unchanged: on the local file
# system, Hadoop's FileContext rename also checks and then renames (only HDFS renames atomically
# without overwrite), and Delta's LocalLogStore also serialises the commits of one JVM. A
# 3-model project ran three times in 9.5 s with Spark's and Delta's defaults and in 7.8 s with these
# settings (0.82x; warm session, 390 forks of ``readlink`` fewer: ``benchmarks/bench_local_renames.py
# --forks``). A project's own conf still wins.
NO_FORK_RENAMES = {
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "spark.delta.logStore.file.impl": "io.delta.storage.LocalLogStore",
}


@dataclass(frozen=True)
class SparkSettings:
    """How to reach Spark; defaults come from ``runtime.spark``, any field can be overridden."""

    master: str = "local[2]"
    remote: str | None = None
    app_name: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    connect_server: ConnectServer = field(default_factory=ConnectServer)
    class_archive: bool = True
    jit: Jit = "auto"  # a local driver's compilers (see .jit): a run resolves auto from what it reads

    @classmethod
    def from_project(cls, project: Project, **overrides: Any) -> SparkSettings:
        rt = project.runtime.spark
        base = cls(master=rt.master, remote=rt.remote, app_name=rt.app_name or f"streamt-{project.name}",
                   conf=dict(rt.conf), connect_server=rt.connect_server, class_archive=rt.class_archive,
                   jit=rt.jit)
        given = {k: v for k, v in overrides.items() if v is not None}
        if "conf" in given:  # merged over the project's conf, not replacing it
            given["conf"] = {**base.conf, **{str(k): str(v) for k, v in given["conf"].items()}}
        return replace(base, **given)

    @property
    def project_server(self) -> bool:
        """Runs use the project's own Connect server while it is up (see :mod:`.project_server`);
        ``start: true`` also starts it when it is not."""
        return self.connect_server.start is not False and not self.remote

    @property
    def mode(self) -> str:
        """'connect' (a remote Spark Connect client), 'local' (embedded JVM) or 'cluster' (a master URL);
        a run on the project's server is decided per run (:func:`.session.create_session`)."""
        if self.remote:
            return "connect"
        return "local" if _LOCAL.match(self.master) else "cluster"


def _local_cores(master: str) -> int:
    m = _LOCAL.match(master)
    n = m.group(1) if m else None
    if n is None:
        return 1
    if n == "*":
        return os.cpu_count() or 2
    return int(n)


def session_conf(project: Project, settings: SparkSettings) -> dict[str, str]:
    """Small-machine defaults plus the project's conf (which wins). Shared by the embedded session and
    a locally started Spark Connect server, so both behave the same."""
    paths = ProjectPaths.from_project(project)
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": "ERROR",
        "spark.sql.session.timeZone": "UTC",
        "spark.scheduler.mode": "FAIR",
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": str(paths.warehouse / "_catalog"),
        "spark.sql.streaming.numRecentProgressUpdates": "1000",
        # every Delta table a run creates keeps a change feed: readers follow its appends through Delta
        # (:func:`..delta.delta_table.change_since`); appends write no extra files for it
        "spark.databricks.delta.properties.defaults.enableChangeDataFeed": "true",
    }
    log_conf = Path(__file__).with_name("log4j2.properties")
    conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{log_conf}"
    if _LOCAL.match(settings.master):
        cores = _local_cores(settings.master)
        # Spark's default of 200 shuffle partitions makes tiny local jobs slow.
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * cores))
        # Delta rebuilds a table's state from its log in 50 partitions by default: on a few local cores
        # that is most of a small table's read or commit (measured 3x slower for 100-row appends). One:
        # each task generates the code of Delta's log actions anew (most of a warm server's CPU), and a
        # local table's log is small (steady +1 % reruns 0.89x the wall, 0.87x the server CPU of one
        # task per core: benchmarks/bench_steady_ab.py)
        conf["spark.databricks.delta.snapshotPartitions"] = "1"
        conf["spark.driver.memory"] = local_driver_memory()  # the driver is the whole engine: see local_memory
        # Delta's VACUUM lists a table's folder in a job of this many tasks (Spark's default: 10,000):
        # measured 18-30 s for a small table's VACUUM locally, 2.4-4 s with as many as cores
        conf["spark.sql.sources.parallelPartitionDiscovery.parallelism"] = str(max(1, cores))
        conf.update(NO_FORK_RENAMES)
    conf.update(settings.conf)
    if conf.get("spark.ui.enabled") == "false":  # records only a UI reads: short, unless the project says
        for key, value in NO_UI_RETENTION.items():
            conf.setdefault(key, value)
    try:  # Delta Lake's (and where used Kafka's, S3A's) jars, resolved once and cached: see session_jars
        return session_jars(project, conf)
    except JarsUnavailable as exc:
        from ..errors import SparkSetupError

        raise SparkSetupError(str(exc)) from None
