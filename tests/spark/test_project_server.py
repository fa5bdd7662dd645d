"""The project's own Spark Connect server: nothing starts it unless asked (a default run leaves no
process behind); ``streamt server start`` starts and warms it, runs use it while it is up (together
too), ``start: true`` lets a run start it; it stops when idle, when asked, and when a client dies with
queries in it (``kill -9``).

Each server start costs a JVM and its warm-up (~20-40 s here), so each test starts as few as its
story needs: ``start: false`` is checked on the server the conf-change test already runs, ``server
stop`` of a live server at the end of the incremental test."""

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
from dagster_streamt.spark.session.project_server import pid_alive, read_state, state_dir, stop_project_server

from ..conftest import load, write_project
from .helpers import jsonl, rows, run

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
FILES = {"in/a.json": jsonl({"id": i} for i in range(5))}


def config(idle_minutes: float = 5.0, partitions: str = "2", start: bool | str = "auto") -> dict[str, Any]:
    return {
        "runtime": {"spark": {"connect_server": {"idle_minutes": idle_minutes, "start": start},
                              "conf": {"spark.sql.shuffle.partitions": partitions}}},
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": [{"name": "id", "type": "bigint"}]}],
        "models": [{"name": "total", "materialized": "table",
                    "sql": 'SELECT count(*) AS n, sum(id) AS s FROM {{ source("raw") }}'}],
    }


def env() -> dict[str, str]:
    return {**os.environ, "DAGSTER_HOME": ""}


def streamt_run(root: Path) -> subprocess.Popen[str]:
    """``streamt run`` in a session of its own (so whatever it leaves behind can be found)."""
    return subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root)], cwd=REPO,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def finished(proc: subprocess.Popen[str]) -> str:
    out, _ = proc.communicate(timeout=240)
    assert proc.returncode == 0, out[-3000:]
    return out


def cli(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], cwd=REPO, env=env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


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


def left_behind(session: int, root: Path) -> list[str]:
    """Live processes of the session ``session`` or whose command line names ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            sid = os.getsid(int(entry.name))
        except (OSError, ProcessLookupError):
            continue
        if sid == session or str(root) in cmd:
            found.append(f"{entry.name}: {cmd[:200]}")
    return found


@pytest.fixture
def project_dir(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    made: list[Any] = []

    def make(name: str = "proj", **kwargs: Any) -> Any:
        project = load(write_project(tmp_path / name, config(**kwargs), FILES))
        made.append(project)
        return project

    yield make
    for project in made:  # no server may outlive the test
        stop_project_server(project)


def client(project: Any, stream: bool = False) -> subprocess.Popen[str]:
    """A process that opens the project's session as a run does and says which kind it got."""
    return subprocess.Popen([sys.executable, "-c", CLIENT, str(project.root), "stream" if stream else "batch"],
                            cwd=REPO, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def said(proc: subprocess.Popen[str], word: str) -> str:
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if word in line:
            return line
    raise AssertionError("".join(lines[-30:]))


def session_kind(project: Any) -> str:
    probe = client(project)
    line = said(probe, "session")
    finished(probe)
    return line.split()[-1]


def test_a_default_run_leaves_no_process_behind(spark: Any, project_dir: Any) -> None:
    project = project_dir()
    for _ in range(2):
        proc = streamt_run(project.root)
        finished(proc)  # its output closed: nothing it started holds the terminal
        assert wait_for(lambda sid=proc.pid: not left_behind(sid, project.root), 5), \
            left_behind(proc.pid, project.root)
    assert read_state(state_dir(project)) is None  # no server was started
    assert rows(spark, Warehouse.for_project(project).table_location("total")) == [{"n": 5, "s": 10}]
    assert "no Spark server is running" in cli("server", "-p", str(project.root))


def test_server_start_is_used_by_runs_until_stopped(spark: Any, project_dir: Any) -> None:
    project = project_dir()
    out = cli("server", "start", "-p", str(project.root))
    assert "started the project's Spark server at sc://localhost:" in out and "warmed it up (quick" in out, out
    pid = server_pid(project)
    assert "already running" in cli("server", "start", "-p", str(project.root))
    first, second = streamt_run(project.root), streamt_run(project.root)  # at once: both use that server
    (project.root / "in" / "b.json").write_text(jsonl({"id": 10} for _ in range(1)))
    finished(first), finished(second)
    assert server_pid(project) == pid and pid_alive(pid)
    assert len(list(state_dir(project).glob("spark-streamt-*.pid"))) == 1  # never a second server
    assert not list(state_dir(project).glob("lease-*"))  # every client let go of it
    assert session_kind(project) == "connect"
    finished(streamt_run(project.root))
    assert rows(spark, Warehouse.for_project(project).table_location("total")) == [{"n": 6, "s": 20}]
    assert f"pid {pid} at sc://localhost:" in cli("server", "-p", str(project.root))

    yml = project.root / "stream_project.yml"  # another session conf: runs go embedded beside the server
    yml.write_text(yml.read_text().replace("spark.sql.shuffle.partitions: '2'", "spark.sql.shuffle.partitions: '3'"))
    assert "'3'" in yml.read_text()
    assert session_kind(project) == "embedded" and pid_alive(pid)
    cli("server", "start", "-p", str(project.root))  # replaces the server with one of the new conf
    assert wait_for(lambda: not pid_alive(pid)), "the server with the old conf is still running"
    new = server_pid(project)
    assert new != pid and session_kind(project) == "connect"
    yml.write_text(yml.read_text().replace("start: auto", "start: false"))  # never use a running server
    assert "start: false" in yml.read_text()
    assert session_kind(project) == "embedded" and pid_alive(new)

    (state_dir(project) / "server.json").unlink()  # its state gone (say, the project folder deleted) ...
    assert wait_for(lambda: not pid_alive(new), 30), "a server nobody can find any more is still running"
    assert "no Spark server is running" in cli("server", "-p", str(project.root))
    assert "no Spark server was running" in cli("server", "stop", "-p", str(project.root))


def test_start_true_lets_a_run_start_it_and_an_idle_server_stops(spark: Any, project_dir: Any) -> None:
    project = project_dir(start=True, idle_minutes=0.1)  # 6 s
    finished(streamt_run(project.root))
    pid = server_pid(project)
    assert pid_alive(pid) and rows(spark, Warehouse.for_project(project).table_location("total")) == \
        [{"n": 5, "s": 10}]
    assert wait_for(lambda: not pid_alive(pid)), "the idle server is still running"
    assert read_state(state_dir(project)) is None
    assert "no client for" in (state_dir(project) / "keeper.log").read_text()


CLIENT = """
import sys, time
from dagster_streamt.spec.loader import load_project
from dagster_streamt.spark.session.session import create_session, is_connect, stop_session
project, _ = load_project(sys.argv[1])
spark = create_session(project)
print("session", "connect" if is_connect(spark) else "embedded", flush=True)
if sys.argv[2] == "stream":
    spark.readStream.format("rate").option("rowsPerSecond", 5).load().writeStream.format("noop").start()
    print("running", flush=True)
    time.sleep(600)
stop_session(spark)
"""


def test_a_killed_client_takes_the_server_and_its_queries_down(project_dir: Any) -> None:
    project = project_dir()
    cli("server", "start", "-p", str(project.root))  # `server stop` of a live one: the incremental test's end
    pid = server_pid(project)
    proc = client(project, stream=True)
    try:
        assert "connect" in said(proc, "session")
        said(proc, "running")
        time.sleep(3)  # the stream runs; the client holds its lease
        assert pid_alive(pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_for(lambda: not pid_alive(pid)), "the server kept the dead client's stream running"
        assert read_state(state_dir(project)) is None and not list(state_dir(project).glob("lease-*"))
        assert "ended without releasing" in (state_dir(project) / "keeper.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_incremental_refreshes_on_the_server_equal_a_rebuild(spark: Any, tmp_path: Path) -> None:
    """The rerun after new data goes through the server (Spark Connect): the corrupt records found in the
    scan of the new file, appended rows, merged aggregation states and DISTINCT sets give the tables a
    rebuild from scratch gives."""
    from dagster_streamt.spark.session.connect_server import port_open

    from .test_incremental_table import COLUMNS, CUSTOMERS, FIRST, MODELS, NAMES, SECOND

    config = {"runtime": {"spark": {"connect_server": {"idle_minutes": 5}}},
              "sources": [{"name": "orders_raw", "format": "json", "path": "data/orders", "columns": COLUMNS},
                          {"name": "customers_raw", "format": "json", "path": "data/customers",
                           "columns": [{"name": "customer", "type": "string"}, {"name": "tier", "type": "string"}]}],
              "models": [{**m, "materialized": "table"} for m in MODELS]}
    files = {"data/orders/part-1.json": jsonl(FIRST) + "{not json\n", "data/customers/all.json": jsonl(CUSTOMERS)}
    project = load(write_project(tmp_path / "proj", config, files))
    fresh = load(write_project(tmp_path / "fresh", config, files))
    try:
        cli("server", "start", "-p", str(project.root))
        state = read_state(state_dir(project)) or {}
        assert isinstance(state.get("port"), int) and port_open(int(state["port"]))
        finished(streamt_run(project.root))  # the first build, through the server
        for root in (project.root, fresh.root):
            (root / "data" / "orders" / "part-2.json").write_text(jsonl(SECOND) + "{also not json\n")
        out = finished(streamt_run(project.root))
        assert out.count("(incremental:") == 7, out  # clean, enriched appended; five aggregations merged
        assert "rebuilt: " in out  # the window function and the outer join
        assert all(r.ok for r in run(spark, fresh).values())  # the rebuild from scratch, in the suite's own session
        for name in NAMES:
            got, want = (sorted((tuple(r.values()) for r in rows(spark, Warehouse.for_project(p).table_location(name))),
                                key=repr) for p in (project, fresh))
            assert [tuple(round(v, 9) if isinstance(v, float) else v for v in r) for r in got] == \
                [tuple(round(v, 9) if isinstance(v, float) else v for v in r) for r in want], name
        quarantine = rows(spark, Warehouse.for_project(project).quarantine_dir("orders_raw"))
        assert sorted(r["raw_record"] for r in quarantine) == ["{also not json", "{not json"]
        pid = int(state["pid"])
        assert "stopped the project's Spark server" in cli("server", "stop", "-p", str(project.root))
        assert not pid_alive(pid) and read_state(state_dir(project)) is None
    finally:
        stop_project_server(project)
