"""The example in every local Spark mode the product offers gives the embedded run's tables: the
project's own server (``streamt server start``) and a remote Spark Connect server
(``runtime.spark.remote``). A cluster master, directly and through Connect, is in test_cluster.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark.project_server import stop_project_server

from ..conftest import load
from .test_cluster import _project, _run, _snapshot

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _streamt(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_the_projects_server_and_a_remote_server_give_the_embedded_result(spark: Any, tmp_path: Path) -> None:
    embedded = _project(tmp_path, "embedded")
    _run(embedded)
    expected = _snapshot(spark, embedded)
    assert {"orders_clean", "customer_orders", "order_metrics"} <= set(expected)

    served = _project(tmp_path, "served")
    try:
        assert "started the project's Spark server" in _streamt("server", "start", "-p", str(served))
        state = json.loads((served / ".streamt" / "connect-server" / "server.json").read_text())
        _run(served)
        assert _snapshot(spark, served) == expected
        assert not list((served / ".streamt" / "connect-server").glob("lease-*"))  # the run let go of it

        remote = _project(tmp_path, "remote", f"runtime:\n  spark:\n    remote: sc://localhost:{state['port']}\n")
        _run(remote, "-e", "cluster")
        assert _snapshot(spark, remote) == expected
    finally:
        stop_project_server(load(served))
