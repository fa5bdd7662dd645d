"""The project's own Spark Connect server (``connect_server.start: auto``): started by the first run,
reused by the next, one per project even when runs start together, restarted for another conf,
stopped when idle, and stopped when a client dies with queries in it (``kill -9``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.project_server import pid_alive, read_state, state_dir, stop_project_server

from ..conftest import load, write_project
from .helpers import jsonl, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
FILES = {"in/a.json": jsonl({"id": i} for i in range(5))}


def config(idle_minutes: float = 5.0, partitions: str = "2") -> dict[str, Any]:
    return {
        "runtime": {"spark": {"connect_server": {"idle_minutes": idle_minutes},
                              "conf": {"spark.sql.shuffle.partitions": partitions}}},
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": [{"name": "id", "type": "bigint"}]}],
        "models": [{"name": "total", "materialized": "table",
                    "sql": 'SELECT count(*) AS n, sum(id) AS s FROM {{ source("raw") }}'}],
    }


def env() -> dict[str, str]:
    return {**os.environ, "STREAMT_SPARK_SERVER": "auto", "DAGSTER_HOME": ""}


def streamt_run(root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root)], cwd=REPO,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finished(proc: subprocess.Popen[str]) -> str:
    out, _ = proc.communicate(timeout=240)
    assert proc.returncode == 0, out[-3000:]
    return out


def server_pid(project: Any) -> int:
    state = read_state(state_dir(project))
    assert state is not None and isinstance(state.get("pid"), int), state
    return int(state["pid"])


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.3)
    return condition()


@pytest.fixture
def project_dir(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    made: list[Any] = []

    def make(**kwargs: Any) -> Any:
        project = load(write_project(tmp_path / "proj", config(**kwargs), FILES))
        made.append(project)
        return project

    yield make
    for project in made:  # no server may outlive the test
        stop_project_server(project)


def test_started_once_reused_and_replaced_for_another_conf(spark: Any, project_dir: Any) -> None:
    project = project_dir()
    first, second = streamt_run(project.root), streamt_run(project.root)  # at once: one server, not two
    finished(first), finished(second)
    pid = server_pid(project)
    assert pid_alive(pid)
    assert len(list(state_dir(project).glob("spark-streamt-*.pid"))) == 1
    assert rows(spark, Warehouse.for_project(project).table_location("total")) == [{"n": 5, "s": 10}]
    assert not list(state_dir(project).glob("lease-*"))  # both clients released their lease

    (project.root / "in" / "b.json").write_text(jsonl({"id": 10} for _ in range(1)))
    finished(streamt_run(project.root))
    assert server_pid(project) == pid  # reused
    assert rows(spark, Warehouse.for_project(project).table_location("total")) == [{"n": 6, "s": 20}]

    changed = project_dir(partitions="3")  # another session conf: this project's server is replaced
    finished(streamt_run(changed.root))
    assert server_pid(changed) != pid and not pid_alive(pid)


def test_an_idle_server_stops(project_dir: Any) -> None:
    project = project_dir(idle_minutes=0.05)  # 3 s
    finished(streamt_run(project.root))
    pid = server_pid(project)
    assert wait_for(lambda: not pid_alive(pid)), "the idle server is still running"
    assert read_state(state_dir(project)) is None


CLIENT = """
import sys, time
from dagster_streamt.spec.loader import load_project
from dagster_streamt.spark.session import create_session
project, _ = load_project(sys.argv[1])
spark = create_session(project)
query = spark.readStream.format("rate").option("rowsPerSecond", 5).load().writeStream.format("noop").start()
print("running", flush=True)
time.sleep(600)
"""


def test_a_killed_client_takes_the_server_and_its_queries_down(project_dir: Any) -> None:
    project = project_dir()
    proc = subprocess.Popen([sys.executable, "-c", CLIENT, str(project.root)], cwd=REPO, env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        while line and "running" not in line:
            line = proc.stdout.readline()
        assert "running" in line, "the client never started its stream"
        pid = server_pid(project)
        time.sleep(3)  # the stream runs; the client still holds its lease
        assert pid_alive(pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_for(lambda: not pid_alive(pid)), "the server kept the dead client's stream running"
        assert read_state(state_dir(project)) is None and not list(state_dir(project).glob("lease-*"))
        assert "ended without releasing" in (state_dir(project) / "keeper.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
