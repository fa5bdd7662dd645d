"""Spark fixtures: one embedded SparkSession for the whole test session (a JVM start costs ~4 s), and
a factory for small throwaway projects on disk. Every test runs the shipped defaults: no switch here
turns a feature off for the suite."""

from __future__ import annotations

import gc
import logging
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagster_streamt.cli.main import GC_THRESHOLDS
from dagster_streamt.spec.loader import load_project
from dagster_streamt.spec.project import Project

from .helpers import S3_BUCKET

# As the `streamt` console script does (cli/main.py): a worker holds Dagster, pyspark and the whole package,
# and Python's default threshold (700) makes the cyclic collector rescan them thousands of times.
gc.set_threshold(*GC_THRESHOLDS)

pytest_plugins = ["tests.changed"]  # `pytest --changed`: only the tests a change reaches

POSTGRES_JAR = Path("/usr/share/java/postgresql.jar")
ProjectFactory = Callable[..., Project]
StreamtHere = Callable[..., subprocess.CompletedProcess[str]]

# Every JVM the suite starts (`streamt run` processes, brokers, servers, clusters, Flink) inherits
# this. The suite's JVMs live seconds to minutes on tiny data, where HotSpot's optimizing
# compiler (C2) costs more CPU than its code saves; the quick compiler alone does the same work with
# less: the example's first `streamt run` took 45 s of CPU instead of 73 s (41 s -> 34 s wall), a rerun
# 26 s instead of 41 s. The shared session's JVM is the exception: it runs for the whole suite, its
# code gets hot, and C2 pays there (Spark files of the suite: 339 s with it, 356 s without). It changes
# how fast Java runs, not what any test checks; the product leaves the JIT alone.
# With the quick compiler only, HotSpot reserves 48 MB for compiled code instead of 240 MB; a Spark
# Connect server of the suite filled that within minutes, and HotSpot then stops compiling for good
# ("CodeCache is full. Compiler has been disabled"): every new method ran interpreted. So the
# reservation stays at the tiered default (tests/spark/test_project_server.py: the warning gone from the
# server's log, the file's time unchanged, 228 s and 220 s).
JIT = "-XX:TieredStopAtLevel=1"
JIT_FLAGS = (JIT, "-XX:ReservedCodeCacheSize=240m")
if JIT not in os.environ.get("JAVA_TOOL_OPTIONS", ""):
    os.environ["JAVA_TOOL_OPTIONS"] = " ".join((os.environ.get("JAVA_TOOL_OPTIONS", ""), *JIT_FLAGS)).strip()


@contextmanager
def _full_jit() -> Iterator[None]:
    """The JVMs started inside get HotSpot's default compilers."""
    saved = os.environ.get("JAVA_TOOL_OPTIONS", "")
    rest = " ".join(part for part in saved.split() if part not in JIT_FLAGS)
    if rest:
        os.environ["JAVA_TOOL_OPTIONS"] = rest
    else:
        os.environ.pop("JAVA_TOOL_OPTIONS", None)
    try:
        yield
    finally:
        os.environ["JAVA_TOOL_OPTIONS"] = saved


def load(root: Path) -> Project:
    project, diags = load_project(root)
    errors = [d.format() for d in diags.errors]
    assert project is not None and not errors, "\n".join(errors)
    return project


def write_project(root: Path, config: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    """Write ``stream_project.yml`` (``project:`` added when missing) and data files under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    config = {"project": {"name": "spark_test"}, **config}
    (root / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def spark(request: pytest.FixtureRequest, shared_spark: Any) -> Any:
    """The embedded session every Spark test shares; only for tests marked ``spark`` (the fast tier,
    ``-m "not spark"``, promises no JVM)."""
    if request.node.get_closest_marker("spark") is None:
        pytest.fail(f"{request.node.nodeid} uses a Spark session: mark it `@pytest.mark.spark`")
    return shared_spark


@pytest.fixture(scope="session")
def shared_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The embedded session every Spark test shares (with the PostgreSQL JDBC driver when installed, and
    Kafka's connectors when cached)."""
    from dagster_streamt.jars import sets
    from dagster_streamt.jars.fetch import cached
    from dagster_streamt.spark import SparkSettings, create_session, stop_session

    project = load(write_project(tmp_path_factory.mktemp("session"), {}))
    conf = {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
            # The suite's queries are small and nearly all different: generating and compiling Java for each
            # costs more than interpreting it (measured: 176 -> 161 s on five Spark test files, 216 -> 154 s
            # on test_incremental_table). Results do not depend on it (Spark runs its own tests both ways);
            # the runs in subprocesses (servers, the cluster, crash tests, the package) keep Spark's codegen.
            "spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    # Kafka's connectors too, so runs in this process (run_here) can read and write topics
    jars = [str(POSTGRES_JAR)] if POSTGRES_JAR.is_file() else []
    jars += [str(jar) for jar in cached(sets.kafka()) or []]
    if jars:
        conf["spark.jars"] = ",".join(jars)
    with _full_jit():
        session = create_session(project, SparkSettings.from_project(project, master="local[2]", conf=conf))
    yield session
    stop_session(session)


def run_here(spark: Any, *args: str, env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``streamt`` command run in this process on ``spark`` (the shared session), as a
    ``CompletedProcess`` (exit code, stdout, stderr), with no ``DAGSTER_HOME`` (the project's own
    instance) unless ``env`` gives one. A command that needs Spark reuses the warm JVM instead of starting
    one (a rerun of the example: 4 s instead of 20 s). For what a command does; what a process does
    (signals, kill -9, what it leaves behind, the installed entry point, its stderr) is tested with
    ``streamt`` in a subprocess.

    Spark SQL settings a run makes on the session are put back afterwards, so the next test sees the
    shared session as it was."""
    from click.testing import CliRunner

    from dagster_streamt.cli.main import cli

    before = dict(spark.conf.getAll)
    # A process without logging set up (`streamt`) prints warnings through logging.lastResort on the
    # current stderr; here pytest's log capture would take them, so lastResort is added for the command.
    logging.getLogger().addHandler(logging.lastResort)
    try:
        result = CliRunner().invoke(cli, list(args), prog_name="streamt", catch_exceptions=False,
                                    env={"DAGSTER_HOME": None, "STREAMT_DEFINITIONS": None, **(env or {})})
    finally:
        logging.getLogger().removeHandler(logging.lastResort)
        after = dict(spark.conf.getAll)  # static settings cannot change on a running session
        for key in sorted(k for k in after.keys() - before.keys() if spark.conf.isModifiable(k)):
            spark.conf.unset(key)
        for key in sorted(k for k in before.keys() & after.keys() if before[k] != after[k]):
            if spark.conf.isModifiable(key):
                spark.conf.set(key, before[key])
    return subprocess.CompletedProcess(["streamt", *args], result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def streamt_here(spark: Any) -> StreamtHere:
    """``streamt_here(*args, env=None)``: :func:`run_here` on the shared session."""

    def run(*args: str, env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
        return run_here(spark, *args, env=env)

    return run


@pytest.fixture
def tmp_project(tmp_path: Path) -> ProjectFactory:
    """``tmp_project(config, files, name="proj")`` writes a project folder and returns it loaded."""

    def make(config: dict[str, Any], files: dict[str, str] | None = None, name: str = "proj") -> Project:
        return load(write_project(tmp_path / name, config, files))

    return make


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One Chromium per worker for every browser test: Playwright's sync API runs one event loop per
    thread, so a second ``sync_playwright()`` while this one lives would fail."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (/usr/bin/chromium); bash scripts/setup-dev.sh installs it")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not installed; bash scripts/setup-dev.sh installs it")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()



@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """One moto S3 server on loopback per test session (a worker), with the bucket ``lake``: its URL."""
    pytest.importorskip("moto.server")
    import socket
    import sys
    import time

    from .openlineage.backend import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "moto's server did not start"
                time.sleep(0.2)
        from pyarrow import fs

        fs.S3FileSystem(access_key="test", secret_key="test", region="us-east-1", scheme="http",
                        endpoint_override=f"127.0.0.1:{port}", allow_bucket_creation=True).create_dir(S3_BUCKET)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything imported by now lives until the worker ends: out of the collector's sight."""
    gc.freeze()
