"""The example on a real distributed engine: a Spark standalone master and a worker on localhost
(executors in their own JVMs), with exactly the results of the embedded local run; and a Spark Connect
server whose master is that cluster. Each run is a whole ``streamt run`` process.

Through the cluster's Connect server runs a small project (a source, a table, a stream), not the whole
example again: what that mode adds is where the session lives (the server is the cluster's
application), and the example's every feature through a Connect server is test_spark_modes.py's
(the project's own server and a remote one). A second example run on the cluster cost 87 s of the
file's 260 s alone."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest

from dagster_streamt.api import load
from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.session.project_server import stop_project_server

from ..conftest import write_project
from .helpers import jsonl

ROOT = Path(__file__).parents[2]
pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(what: str, ok: Any, log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} did not come up; its log ends with:\n{log.read_text()[-2000:]}")


def _master_state(ui_port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as resp:
        state: dict[str, Any] = json.load(resp)
    return state


def _workers(ui_port: int) -> int:
    try:
        return int(_master_state(ui_port).get("aliveworkers") or 0)
    except OSError:  # the UI answers 404 for a moment while it starts
        return 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """``(spark://127.0.0.1:PORT, master web UI port)`` of a standalone master with one 2-core worker."""
    home = Path(pyspark.__file__).resolve().parent
    logs = tmp_path_factory.mktemp("standalone")
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable}
    spark_class = str(home / "bin" / "spark-class")
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        with (logs / "master.log").open("w") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", str(ui)], env=env, stdout=out, stderr=subprocess.STDOUT))
        _wait_for("the master", lambda: _listening(ui), logs / "master.log")
        with (logs / "worker.log").open("w") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "2",
                 "--memory", "2g", "--webui-port", str(worker_ui), "--work-dir", str(logs / "work"), url],
                env=env, stdout=out, stderr=subprocess.STDOUT))
        _wait_for("the worker", lambda: _workers(ui) > 0, logs / "worker.log")
        yield url, ui
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _project(tmp: Path, name: str, runtime: str | None = None) -> Path:
    """A copy of the example with the same generated data and, when given, environments/cluster.yml."""
    dst = tmp / name
    shutil.copytree(ROOT / "project", dst, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    subprocess.run([sys.executable, str(ROOT / "project" / "generate.py"), "--out", str(dst / "data"),
                    "--orders", "4000", "--customers", "200"], check=True, capture_output=True)
    if runtime is not None:
        (dst / "environments" / "cluster.yml").write_text(runtime)
    return dst


def _run(project: Path, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(project), *args],
                       capture_output=True, text=True, timeout=900, env={**os.environ, "DAGSTER_HOME": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _value(v: Any) -> Any:
    return round(v, 6) if isinstance(v, float) else v


def _snapshot(spark: Any, project: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored model's rows, sorted, floats rounded (partial sums may meet in another order)."""
    loaded = load(project)
    warehouse = Warehouse.for_project(loaded.project)
    out: dict[str, list[tuple[Any, ...]]] = {}
    for name in sorted(loaded.compiled.models):
        location = warehouse.table_location(name)
        if location is None:
            continue
        rows = spark.read.format("delta").load(str(location)).collect()
        out[name] = sorted((tuple(_value(v) for v in r) for r in rows), key=repr)
    return out


def test_cluster_and_connect_runs_equal_the_local_run(spark: Any, cluster: tuple[str, int], tmp_path: Path,
                                                     embedded_example: dict[str, Any]) -> None:
    url, ui = cluster
    expected = embedded_example

    direct = _project(tmp_path, "direct", f"runtime:\n  spark:\n    master: {url}\n")
    _run(direct, "-e", "cluster")
    assert _snapshot(spark, direct) == expected
    apps = _master_state(ui)["completedapps"]
    assert [a["name"] for a in apps] == ["streamt-shop"]  # the run's driver used the cluster's executors

    port = _free_port()
    via_connect = _small_project(tmp_path / "connect", f"runtime:\n  spark:\n    master: {url}\n"
                                                       f"    connect_server: {{start: true, port: {port}}}\n")
    try:
        _run(via_connect, "-e", "cluster")
        assert _snapshot(spark, via_connect) == SMALL_EXPECTED
        running = [a["name"] for a in _master_state(ui)["activeapps"]]
        assert running == ["Spark Connect server"], running  # the server is the cluster's application
    finally:
        stop_project_server(load(via_connect, "cluster").project)


SMALL = {
    "project": {"name": "small"},
    "sources": [{"name": "raw", "format": "json", "path": "in",
                 "columns": [{"name": "id", "type": "bigint"}, {"name": "kind", "type": "string"}]}],
    "models": [
        {"name": "clean", "materialized": "stream", "sql": 'SELECT id, kind FROM {{ source("raw") }} WHERE id >= 0'},
        {"name": "by_kind", "materialized": "table",
         "sql": 'SELECT kind, count(*) AS n, sum(id) AS s FROM {{ ref("clean") }} GROUP BY kind'},
    ],
}
SMALL_EXPECTED = {
    "by_kind": [("a", 10, 90), ("b", 10, 100)],
    "clean": sorted(((i, "ab"[i % 2]) for i in range(20)), key=repr),
}


def _small_project(root: Path, runtime: str) -> Path:
    """A stream and the table aggregating it, over 20 records and one negative id the stream drops."""
    return write_project(root, SMALL, {"in/a.json": jsonl({"id": i, "kind": "ab"[i % 2]} for i in [*range(20), -1]),
                                       "environments/cluster.yml": runtime})
