"""Several processes on one project at once (no Derby metastore to fight over), and Spark Connect."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import Warehouse, stop_project_server
from dagster_streamt.spark.session.connect_server import port_open

from ..conftest import load, write_project
from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
CONFIG: dict[str, Any] = {
    "sources": [{"name": "raw", "format": "json", "path": "in", "columns": [{"name": "id", "type": "bigint"}]}],
    "models": [
        {"name": "daily", "materialized": "table", "sql": 'SELECT count(*) AS n FROM {{ source("raw") }}'},
        {"name": "events", "materialized": "stream", "sql": 'SELECT id FROM {{ source("raw") }}'},
    ],
}
FILES = {"in/a.json": jsonl({"id": i} for i in range(5))}


def _worker(project_dir: Path, go: str, *models: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.spark.proc_worker", str(project_dir), go, *models],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _messages(proc: subprocess.Popen[str], timeout: float = 150) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=timeout)
    merged: dict[str, Any] = {}
    for line in out.splitlines():
        if line.startswith("{"):
            merged.update(json.loads(line))
    assert proc.returncode == 0, out[-2000:]
    return merged


@pytest.fixture(scope="module")
def connect_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, int, subprocess.Popen[str]]]:
    """A client process whose project starts its own Spark Connect server. Started once, early, so that
    the ~15 s server start overlaps the other test in this module."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = {**CONFIG, "runtime": {"spark": {"connect_server": {"start": True, "port": port},
                                              "conf": {"spark.sql.shuffle.partitions": "2"}}}}
    project = load(write_project(tmp_path_factory.mktemp("connect") / "proj", config, FILES))
    proc = _worker(project.root, "-", "daily", "events")
    try:
        yield project, port, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        stop_project_server(project)


def test_two_processes_run_on_one_project_at_once(spark: Any, tmp_project: Any, tmp_path: Path,
                                                  connect_run: Any) -> None:
    project = tmp_project(CONFIG, FILES)
    go = tmp_path / "go"
    proc = _worker(project.root, str(go), "daily")
    assert proc.stdout is not None
    assert "ready" in json.loads(proc.stdout.readline())  # the other JVM is up
    go.touch()
    mine = run(spark, project, ["events"])["events"]  # meanwhile, in this process
    theirs = _messages(proc)["results"]["daily"]
    assert mine.ok and mine.rows_written == 5, mine.error
    assert theirs[0] == "success", theirs
    assert rows(spark, Warehouse.for_project(project).table_location("daily")) == [{"n": 5}]


def test_connect_server_is_started_reused_and_stopped(connect_run: Any) -> None:
    project, port, proc = connect_run
    got = _messages(proc, timeout=240)
    assert got["connect"] is True
    assert got["results"] == {"daily": ["success", 1, None], "events": ["success", 5, None]}
    assert got["one"] == 1 and got["reconnect"] < 5
    assert port_open(port), "the server outlives its clients"
    assert stop_project_server(project) and not port_open(port)
