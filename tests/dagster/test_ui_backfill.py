"""Backfills from the Dagster UI work, end to end: a real `dagster_webserver` takes the UI's
`launchPartitionBackfill` mutation for 3 partitions of a day-partitioned model, a real
`dagster-daemon` executes the backfill (one run, single-run policy, in its own process with its own
Spark JVM), and exactly those 3 partitions end up materialized and stored."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from ..helpers import graphql, write_project
from .test_partitions_dagster import FILES as PARTITIONED
from .test_partitions_dagster import events

KEYS = ["2026-01-02", "2026-01-03", "2026-01-04"]
TIMEOUT_S = 240

FILES = {
    "stream_project.yml": "project: {name: ui_parts}\n",
    "sources/events.yml": PARTITIONED["sources/events.yml"],
    "models/daily_events.yml": """\
        models:
          - name: daily_events
            materialized: table
            partitioned_by: {column: ts, granularity: day, start: 2026-01-01, end: 2026-01-06}
            sql: |
              SELECT id, ts, amount FROM {{ source("events") }}
              WHERE ts >= {{ partition_start }} AND ts < {{ partition_end }}
        """,
    "definitions.py": """\
        from pathlib import Path

        from dagster_streamt.dagster import build_definitions

        defs = build_definitions(Path(__file__).parent)
        """,
    "data/events/a.json": events(),  # two rows on each of 5 days
}

# What the UI's "Materialize > Launch backfill" sends for assets of the (hidden) asset job.
LAUNCH = """
mutation($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message stack }
    ... on PartitionKeysNotFoundError { message }
    ... on InvalidSubsetError { message }
  }
}"""
BACKFILL = """
query($id: String!) {
  partitionBackfillOrError(backfillId: $id) {
    __typename
    ... on PartitionBackfill {
      status
      isAssetBackfill
      error { message }
      runs { runId status tags { key value } }
    }
    ... on PythonError { message }
  }
}"""
ASSETS = "{ assetNodes { assetKey { path } partitionKeys } }"
# The `dagster-daemon` console script of this interpreter. Its backfill loop runs every 30 s (no public
# setting shortens it): a backfill is marked complete by the first iteration after its run ended.
DAEMON = str(Path(sys.executable).with_name("dagster-daemon"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list[str], cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    # own session: stopping it can reach the code servers and run processes it started
    with log.open("wb") as out:
        return subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # both CLIs shut their code servers down on an interrupt
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever of its process group is left
    proc.wait(timeout=10)


def _tail(*logs: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in logs if p.exists())


@pytest.mark.spark  # the daemon's run materializes on Spark
def test_backfill_launched_like_the_ui_runs_on_the_daemon(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", dict(FILES))
    (tmp_path / "workspace.yaml").write_text(
        "load_from:\n  - python_file:\n      relative_path: proj/definitions.py\n      location_name: ui_parts\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(f"""\
storage:
  sqlite:
    base_dir: {home / "storage"}
run_coordinator:
  module: dagster
  class: QueuedRunCoordinator
  config: {{max_concurrent_runs: 2, dequeue_interval_seconds: 1}}
telemetry:
  enabled: false
""")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    workspace = str(tmp_path / "workspace.yaml")
    port = _free_port()
    web_log, daemon_log = tmp_path / "webserver.log", tmp_path / "daemon.log"
    procs = [_start([sys.executable, "-m", "dagster_webserver", "-w", workspace, "-h", "127.0.0.1",
                     "-p", str(port)], tmp_path, env, web_log)]
    try:
        deadline = time.time() + TIMEOUT_S
        nodes: dict[str, Any] = {}
        while not nodes and time.time() < deadline:
            assert procs[0].poll() is None, _tail(web_log)
            with contextlib.suppress(OSError):  # not listening yet
                nodes = {"/".join(n["assetKey"]["path"]): n for n in graphql(port, ASSETS)["assetNodes"]}
            time.sleep(0.5)
        assert nodes.get("daily_events"), f"the webserver never served the asset\n{_tail(web_log)}"
        assert nodes["daily_events"]["partitionKeys"] == [f"2026-01-0{d}" for d in range(1, 6)]

        launched = graphql(port, LAUNCH, {"backfillParams": {
            "tags": [], "assetSelection": [{"path": ["daily_events"]}], "partitionNames": KEYS,
            "fromFailure": False}})["launchPartitionBackfill"]
        assert launched["__typename"] == "LaunchBackfillSuccess", launched
        backfill_id = launched["backfillId"]

        # Started after the launch, so that its first backfill iteration (at startup) picks it up.
        procs.append(_start([DAEMON, "run", "-w", workspace], tmp_path, env, daemon_log))
        backfill: dict[str, Any] = {}
        while time.time() < deadline:
            assert procs[1].poll() is None, _tail(daemon_log)
            backfill = graphql(port, BACKFILL, {"id": backfill_id})["partitionBackfillOrError"]
            if backfill.get("status") not in (None, "REQUESTED"):
                break
            time.sleep(1)
        assert backfill.get("status") == "COMPLETED_SUCCESS", f"{backfill}\n{_tail(web_log, daemon_log)}"
        assert backfill["isAssetBackfill"] and backfill["error"] is None
        assert len(backfill["runs"]) == 1, backfill["runs"]  # single-run policy: one run for the range
        run = backfill["runs"][0]
        tags = {t["key"]: t["value"] for t in run["tags"]}
        assert run["status"] == "SUCCESS"
        assert tags["dagster/backfill"] == backfill_id
        assert (tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]) == (
            KEYS[0], KEYS[-1])
    finally:
        for proc in reversed(procs):
            _stop(proc)

    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert [r.run_id for r in instance.get_runs()] == [run["runId"]]
        assert instance.get_materialized_partitions(dg.AssetKey("daily_events")) == set(KEYS)
        mat = instance.get_latest_materialization_event(dg.AssetKey("daily_events")).asset_materialization
        assert mat.metadata["partitions"].value == ", ".join(KEYS)
        assert mat.metadata["dagster/row_count"].value == 6  # 2 rows on each of the 3 days
    data = root / ".streamt" / "warehouse" / "daily_events" / "data"
    folders = [p for p in data.iterdir() if p.is_dir() and p.name != "_delta_log"]  # a Delta table's partitions
    assert sorted(p.name for p in folders) == [f"streamt_partition={k}" for k in KEYS]
    assert all(list(p.glob("*.parquet")) for p in folders)
