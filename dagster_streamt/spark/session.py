"""Create the SparkSession a run uses: embedded local (default), Spark Connect, or a cluster master.

The embedded session never touches Hive/Derby (``catalogImplementation=in-memory``): tables are
path-based under the project's warehouse, so any number of processes can run on one project.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from ..spec.models import ConnectServer
from ..spec.project import Project
from .errors import SparkSetupError, first_meaningful_line
from .java import check_java
from .paths import ProjectPaths

_LOCAL = re.compile(r"^local(?:\[(\*|\d+)(?:,\s*\d+)?\])?$")


@dataclass(frozen=True)
class SparkSettings:
    """How to reach Spark; defaults come from ``runtime.spark``, any field can be overridden."""

    master: str = "local[2]"
    remote: str | None = None
    app_name: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    connect_server: ConnectServer = field(default_factory=ConnectServer)

    @classmethod
    def from_project(cls, project: Project, **overrides: Any) -> SparkSettings:
        rt = project.runtime.spark
        base = cls(master=rt.master, remote=rt.remote, app_name=rt.app_name or f"streamt-{project.name}",
                   conf=dict(rt.conf), connect_server=rt.connect_server)
        given = {k: v for k, v in overrides.items() if v is not None}
        if "conf" in given:  # merged over the project's conf, not replacing it
            given["conf"] = {**base.conf, **{str(k): str(v) for k, v in given["conf"].items()}}
        return replace(base, **given)

    @property
    def mode(self) -> str:
        """'connect' (a Spark Connect client), 'local' (embedded JVM) or 'cluster' (a master URL)."""
        if self.remote or self.connect_server.start:
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
    }
    log_conf = Path(__file__).with_name("log4j2.properties")
    conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{log_conf}"
    if _LOCAL.match(settings.master):
        # Spark's default of 200 shuffle partitions makes tiny local jobs slow.
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * _local_cores(settings.master)))
    conf.update(settings.conf)
    return conf


def is_connect(spark: SparkSession) -> bool:
    """True for a Spark Connect client session (no SparkContext, no local properties)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def create_session(project: Project, settings: SparkSettings | None = None) -> SparkSession:
    """Start (or reuse this process's) SparkSession for ``project``.

    Raises :class:`SparkSetupError` before any JVM starts when Java is missing or too old.
    """
    settings = settings or SparkSettings.from_project(project)
    conf = session_conf(project, settings)
    if settings.mode == "connect":
        return _connect(project, settings, conf)
    check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(settings.master).appName(settings.app_name or "streamt")
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:
        raise SparkSetupError(f"could not start Spark with master {settings.master!r}: "
                              f"{first_meaningful_line(exc)}") from exc


def _connect(project: Project, settings: SparkSettings, conf: Mapping[str, str]) -> SparkSession:
    from .connect_server import ensure_connect_server

    url = settings.remote
    if settings.connect_server.start:
        url = ensure_connect_server(project, settings, conf)
    assert url is not None
    # Only SQL settings can be changed by a client; static ones belong to the server.
    runtime = {k: v for k, v in conf.items() if k.startswith("spark.sql.") and
               k not in ("spark.sql.catalogImplementation", "spark.sql.warehouse.dir")}
    try:
        # pyspark's own builder: it also switches pyspark.sql.functions to Connect for this process.
        return SparkSession.builder.remote(url).config(map=runtime).getOrCreate()
    except Exception as exc:
        raise SparkSetupError(f"could not connect to Spark Connect at {url}: {first_meaningful_line(exc)}; "
                              "check that the server is running (or set runtime.spark.connect_server.start: true)"
                              ) from exc


def stop_session(spark: SparkSession) -> None:
    """Stop running streaming queries, then the session (a Connect server keeps running)."""
    try:
        for query in spark.streams.active:
            query.stop()
    finally:
        spark.stop()
