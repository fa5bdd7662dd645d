"""The example through the project's own Spark Connect server (``streamt server start``) gives the
embedded run's tables, and another project finds that server as a remote one (``runtime.spark.remote``).
A cluster master, directly and through Connect, is in test_cluster.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark.session.project_server import stop_project_server

from ..conftest import load, write_project
from .test_cluster import SMALL_EXPECTED, _project, _run, _small_project, _snapshot

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _streamt(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_the_projects_server_and_a_remote_server_give_the_embedded_result(spark: Any, tmp_path: Path,
                                                                         embedded_example: dict[str, Any]) -> None:
    expected = embedded_example

    served = _project(tmp_path, "served")
    try:
        assert "started the project's Spark server" in _streamt("server", "start", "-p", str(served))
        state = json.loads((served / ".streamt" / "connect-server" / "server.json").read_text())
        _run(served)
        assert _snapshot(spark, served) == expected
        assert not list((served / ".streamt" / "connect-server").glob("lease-*"))  # the run let go of it

        # another project naming that server (runtime.spark.remote): a small one, since what it adds is how
        # the session is found; the example's every model through a Connect server was the run above
        remote = _small_project(tmp_path / "remote", f"runtime:\n  spark:\n    remote: sc://localhost:{state['port']}\n")
        _run(remote, "-e", "cluster")
        assert _snapshot(spark, remote) == SMALL_EXPECTED
    finally:
        stop_project_server(load(served))


def test_an_unreachable_remote_server_is_one_clear_error_at_once(tmp_path: Path) -> None:
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    root = write_project(tmp_path / "p", {
        "runtime": {"spark": {"remote": f"sc://localhost:{port}"}},
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": [{"name": "id", "type": "bigint"}]}],
        "models": [{"name": "t", "materialized": "table", "sql": 'SELECT id FROM {{ source("raw") }}'}]},
        {"in/a.json": '{"id": 1}\n'})
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root)], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "DAGSTER_HOME": ""})
    assert r.returncode != 0 and time.monotonic() - start < 60  # not the Connect client's minutes of retries
    assert f"could not connect to Spark Connect at sc://localhost:{port}" in r.stderr, r.stdout + r.stderr
    assert "streamt server start" in r.stderr and "Traceback" not in r.stdout + r.stderr
