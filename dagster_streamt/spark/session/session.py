"""Create the SparkSession a run uses: embedded local (default), Spark Connect, or a cluster master.

The embedded session never touches Hive/Derby (``catalogImplementation=in-memory``): tables are
path-based under the project's warehouse, so any number of processes can run on one project.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping

from pyspark.sql import SparkSession

from ...spec.project import Project
from .. import conditions  # noqa: F401 - Delta's conflicts convert to delta-spark's classes in every session
from ..errors import SparkSetupError, first_meaningful_line
from .java import check_java
from .jit import with_jit
from .jvm_archive import with_archive
from .settings import SparkSettings, session_conf


def is_connect(spark: SparkSession) -> bool:
    """True for a Spark Connect client session (no SparkContext, no local properties)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def create_session(project: Project, settings: SparkSettings | None = None) -> SparkSession:
    """Start (or reuse this process's) SparkSession for ``project``: a client of the project's own
    Connect server while it is up (or, with ``connect_server.start: true``, once this call started it),
    a client of ``runtime.spark.remote``, or an embedded JVM (local or cluster master), which ends with
    this process.

    Raises :class:`SparkSetupError` before any JVM starts when Java is missing or too old.
    """
    settings = settings or SparkSettings.from_project(project)
    conf = session_conf(project, settings)
    if settings.mode == "connect":
        assert settings.remote is not None
        return _client(settings.remote, conf)
    if settings.project_server:
        from .project_server import connect_url, ensure_project_server

        url = connect_url(project, settings, conf)
        if url is None and settings.connect_server.start is True:
            url, _ = ensure_project_server(project, settings, conf, lease=True)
        if url is not None:
            return _client(url, conf)
    return _embedded(settings, conf)


def _embedded(settings: SparkSettings, conf: Mapping[str, str]) -> SparkSession:
    check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if settings.mode == "local" and settings.class_archive:  # a faster JVM start and first query
        conf = with_archive(conf)
    if settings.mode == "local":  # C1 alone for a run with little new data (see .jit)
        conf = with_jit(conf, settings.jit)
    builder = SparkSession.builder.master(settings.master).appName(settings.app_name or "streamt")
    for key, value in conf.items():
        builder = builder.config(key, value)
    threading.Thread(target=_py4j_converters, name="streamt-spark-imports", daemon=True).start()
    try:
        return builder.getOrCreate()
    except Exception as exc:
        raise SparkSetupError(f"could not start Spark with master {settings.master!r}: "
                              f"{first_meaningful_line(exc)}") from exc


def _py4j_converters() -> None:
    """Import what pyspark's first JVM call with arguments imports (its numpy converter asks
    ``pyspark.testing.utils``, which imports pandas: about 0.7 s) while the JVM boots, not after: the
    session's creation waits for that call (measured: a +1 % rerun 0.96x, ``docs/performance.md``)."""
    try:
        import pyspark.testing.utils  # noqa: F401
    except Exception:  # an import pyspark itself will report (or not need)
        return


def connect_modules() -> None:
    """Import pyspark's Spark Connect client. Its progress bar asks IPython for the terminal size when
    IPython happens to be installed: 0.8 s of imports in every client process, for a bar a run never
    shows. While no IPython is loaded, the client is imported with IPython looking absent (pyspark
    falls back to a fixed size); IPython stays importable afterwards."""
    if "pyspark.sql.connect.session" in sys.modules or "IPython" in sys.modules:
        return
    sys.modules["IPython"] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import pyspark.sql.connect.session  # noqa: F401
    finally:
        if "IPython" in sys.modules and sys.modules["IPython"] is None:
            del sys.modules["IPython"]


def _reachable(url: str, timeout: float = 10.0) -> str | None:
    """Why ``sc://host:port/...`` cannot be reached (None when a TCP connection opens). The Connect
    client itself retries a refused connection for minutes before it gives up."""
    import socket
    from urllib.parse import urlparse

    parsed = urlparse(url.replace("sc://", "http://", 1).split(";", 1)[0])
    host, port = parsed.hostname or "localhost", parsed.port or 15002
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or exc}"


def _client(url: str, conf: Mapping[str, str]) -> SparkSession:
    problem = _reachable(url)
    if problem is not None:
        raise SparkSetupError(f"could not connect to Spark Connect at {url} ({problem}); check that the server is "
                              "running (`streamt server start` starts the project's own, or fix runtime.spark.remote)")
    connect_modules()
    # Only SQL settings can be changed by a client; static ones belong to the server.
    runtime: dict[str, str | int | float | bool | None] = {
        k: v for k, v in conf.items() if k.startswith("spark.sql.") and not k.startswith("spark.sql.catalog.") and
        k not in ("spark.sql.catalogImplementation", "spark.sql.warehouse.dir", "spark.sql.extensions")}
    try:
        # pyspark's own builder: it also switches pyspark.sql.functions to Connect for this process.
        return SparkSession.builder.remote(url).config(map=runtime).getOrCreate()
    except Exception as exc:
        raise SparkSetupError(f"could not connect to Spark Connect at {url}: {first_meaningful_line(exc)}; "
                              "check that the server is running (`streamt server start` starts the project's own)"
                              ) from exc


def already_running() -> bool:
    """Whether this thread already has a session (a notebook's, a test suite's): a run then reuses it
    (``getOrCreate``) and must leave it running for its owner.

    >>> already_running()
    False
    """
    return SparkSession.getActiveSession() is not None


def stop_session(spark: SparkSession) -> None:
    """Stop running streaming queries, then the session (a Connect server keeps running)."""
    try:
        for query in spark.streams.active:
            query.stop()
    finally:
        spark.stop()
