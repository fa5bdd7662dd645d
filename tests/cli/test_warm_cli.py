"""The project's warm command process (``dagster_streamt.cli.warm_cli``) without Spark: a command handed
to it runs with the caller's terminal, working directory and environment and returns its exit status;
stale code is refused (the caller runs the command itself); it stops once the server it belongs to is
gone. That it really runs ``streamt run`` on the project's server is in
``tests/spark/test_project_server.py``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dagster_streamt.cli import warm_client
from tests.helpers import write_project

MODEL = """\
models:
  - name: m
    sql: SELECT 1 AS x
"""


def _wait(predicate, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def warm(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A project, a stand-in for its Spark server (a process whose life decides the warm process's) and
    the warm process itself, started as the server's starter starts it."""
    root = write_project(tmp_path / "p", {"models.yml": MODEL})
    folder = root / ".streamt" / "connect-server"
    folder.mkdir(parents=True)
    server = subprocess.Popen(["sleep", "600"])
    log = (folder / "warm-cli.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli.warm_cli", str(folder), str(server.pid)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    assert _wait(lambda: (folder / warm_client.SOCKET).exists() or proc.poll() is not None, 90), \
        (folder / "warm-cli.log").read_text()
    assert proc.poll() is None, (folder / "warm-cli.log").read_text()
    yield root, folder, server, proc
    for p in (server, proc):
        if p.poll() is None:
            p.kill()
            p.wait()


def _client_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STREAMT_SPARK_SERVER", warm_client.ENV)}
    return env


def test_a_command_runs_in_the_warm_process_with_the_callers_terminal_cwd_and_exit_status(warm, tmp_path):  # type: ignore[no-untyped-def]
    root, folder, _, _ = warm
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    # a relative -p resolved against the caller's directory, not the warm process's
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", os.path.relpath(root, cwd),
                        "-s", "nope"], capture_output=True, text=True, cwd=cwd, env=_client_env(), timeout=120)
    assert r.returncode == 2, r
    assert "selection 'nope' matches nothing" in r.stderr  # the child wrote to the caller's stderr
    log = (folder / "warm-cli.log").read_text()
    assert "streamt run -p" in log and ": exit 2" in log, log  # it was the warm process's child that ran it

    # STREAMT_WARM_CLI=off: the command runs in its own process (the warm process sees nothing)
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root), "-s", "nope"],
                       capture_output=True, text=True, env={**_client_env(), warm_client.ENV: "off"}, timeout=120)
    assert r.returncode == 2 and "matches nothing" in r.stderr
    assert (folder / "warm-cli.log").read_text().count(": exit 2") == 1


def test_stale_code_is_refused_and_nothing_runs(warm, monkeypatch):  # type: ignore[no-untyped-def]
    root, folder, _, _ = warm
    monkeypatch.delenv("STREAMT_SPARK_SERVER", raising=False)
    monkeypatch.delenv(warm_client.ENV, raising=False)
    monkeypatch.setattr(warm_client, "code_stamp", lambda: "an older version of the package")
    assert warm_client.hand_over(["run", "-p", str(root), "-s", "nope"]) is None  # the caller runs it itself
    assert "streamt run" not in (folder / "warm-cli.log").read_text()
    # commands it does not take, and projects without a warm process, are not handed over either
    assert warm_client.hand_over(["validate", "-p", str(root)]) is None
    assert warm_client.hand_over(["run", "--continuous", "-p", str(root)]) is None
    assert warm_client.hand_over(["run", "-p", str(root.parent)]) is None


def test_it_stops_with_its_server_and_removes_its_socket(warm):  # type: ignore[no-untyped-def]
    _, folder, server, proc = warm
    server.kill()
    server.wait()
    assert proc.wait(timeout=30) == 0
    assert not (folder / warm_client.SOCKET).exists() and not (folder / "warm-cli.pid").exists()
