"""A translator subclass in the project's definitions.py changes keys in every CLI command: `streamt
run`, `backfill`, `test`, `status`, `lineage --runs`, continuous mode and the OpenLineage events all
record and read the prefixed keys the UI shows, and nothing lands on the default keys."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from ..conftest import StreamtHere
from ..helpers import write_project

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def rows(day: int, ids: range) -> str:
    return "".join(json.dumps({"id": i, "ts": f"2026-01-0{day}T10:00:00Z", "amount": i * 10}) + "\n" for i in ids)


FILES = {
    "stream_project.yml": "project: {name: keyed}\n",
    "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data/events
            columns: [{name: id, type: bigint}, {name: ts, type: timestamp}, {name: amount, type: int}]
        """,
    "models/m.yml": """\
        models:
          - name: clean
            materialized: stream
            advanced: {spark: {trigger: "1 second"}}
            sql: SELECT id, ts, amount FROM {{ source("events") }} WHERE id IS NOT NULL
          - name: daily
            materialized: table
            partitioned_by: {column: ts, granularity: day, start: 2026-01-01, end: 2026-01-06}
            sql: |
              SELECT id, ts, amount FROM {{ ref("clean") }}
              WHERE ts >= {{ partition_start }} AND ts < {{ partition_end }}
        """,
    "tests/t.yml": """\
        tests:
          - name: clean-ids
            model: clean
            assertions: [{not_null: {columns: [id]}}]
          - name: daily_amounts
            model: daily
            severity: warn
            assertions: [{expression_is_true: {expression: "amount > 10"}}]
        """,
    "definitions.py": """\
        from pathlib import Path

        import dagster as dg

        from dagster_streamt.dagster import StreamtTranslator, build_definitions


        class Prefixed(StreamtTranslator):
            def get_model_key(self, model):
                return dg.AssetKey(["warehouse", "keyed", model.name])

            def get_check_name(self, test):
                return "t_" + super().get_check_name(test)


        defs = build_definitions(Path(__file__).parent, translator=Prefixed("keyed"))
        """,
    "data/events/a.json": rows(1, range(1, 4)) + rows(2, range(4, 6)),
}
CLEAN, DAILY = dg.AssetKey(["warehouse", "keyed", "clean"]), dg.AssetKey(["warehouse", "keyed", "daily"])


def streamt(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "STREAMT_DEFINITIONS")}
    return subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args, "-p", str(root)],
                          capture_output=True, text=True, timeout=600, env=env)


def wait_for(check: Callable[[], bool], what: str, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while not check():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def test_prefixed_keys_through_every_command(tmp_path: Path, streamt_here: StreamtHere) -> None:
    root = write_project(tmp_path / "keyed", dict(FILES))
    ran = streamt_here("run", "-p", str(root))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1/1 model(s) succeeded" in ran.stdout and "test clean-ids passed" in ran.stdout

    back = streamt_here("backfill", "daily", "--from", "2026-01-01", "--to", "2026-01-02", "-p", str(root))
    assert back.returncode == 0, back.stdout + back.stderr

    tested = streamt_here("test", "--format", "json", "-p", str(root))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    results = {r["test"]: r for r in json.loads(tested.stdout)}
    assert results["clean-ids"]["passed"] and not results["daily_amounts"]["passed"]  # id 1 has amount 10
    assert results["daily_amounts"]["assertions"][0]["failing_rows"] == 1

    with dg.DagsterInstance.from_config(str(root / ".streamt" / "dagster")) as instance:
        runs = {r.tags["streamt/command"]: r for r in instance.get_runs()}
        assert sorted(runs) == ["backfill", "run", "test"] and all(r.is_success for r in runs.values())
        assert instance.get_latest_materialization_event(CLEAN).asset_materialization.metadata[
            "dagster/row_count"].value == 5
        assert instance.get_materialized_partitions(DAILY) == {"2026-01-01", "2026-01-02"}
        for bare in (dg.AssetKey(["clean"]), dg.AssetKey(["daily"])):
            assert instance.get_latest_materialization_event(bare) is None
        test_run = runs["test"].run_id
        for check in (dg.AssetCheckKey(CLEAN, "t_clean_ids"), dg.AssetCheckKey(DAILY, "t_daily_amounts")):
            record = instance.get_latest_asset_check_evaluation_record(check)
            assert record is not None and record.run_id == test_run, check  # `streamt test` recorded it

    status = json.loads(streamt_here("status", "--format", "json", "-p", str(root)).stdout)
    models = {m["model"]: m for m in status["models"]}
    assert models["clean"]["status"] == "COMPLETE" and models["clean"]["rows"] == 5
    assert models["daily"]["status"] == "COMPLETE" and models["daily"]["failed_tests"] == ["daily_amounts"]
    checks = {c["test"]: c for c in status["tests"]}
    assert checks["clean-ids"]["passed"] is True and checks["daily_amounts"]["passed"] is False
    history = json.loads(
        streamt_here("lineage", "-m", "clean", "--runs", "--format", "json", "-p", str(root)).stdout)
    assert history["clean"]["status"] == "COMPLETE" and history["clean"]["rows"] == 5
    assert history["daily"]["status"] == "COMPLETE"

    events = [json.loads(line) for line in (root / ".streamt" / "openlineage.jsonl").read_text().splitlines()]
    ended = {(e["job"]["name"], e["eventType"]) for e in events}
    assert {("keyed.clean", "COMPLETE"), ("keyed.daily", "COMPLETE"), ("keyed.test.clean-ids", "COMPLETE"),
            ("keyed.test.daily_amounts", "COMPLETE")} <= ended
    parents = sorted(e["run"]["runId"] for e in events
                     if e["job"]["name"] == "keyed.dagster_run" and e["eventType"] == "COMPLETE")
    assert parents == sorted(r.run_id for r in runs.values())  # each run emitted exactly once

    again = streamt_here("run", "-p", str(root))  # nothing new: the stream writes no row and still holds 5
    assert again.returncode == 0, again.stdout + again.stderr
    status = json.loads(streamt_here("status", "--format", "json", "-p", str(root)).stdout)
    models = {m["model"]: m for m in status["models"]}
    assert models["clean"]["rows"] == 5, models["clean"]

    _continuous(root)


def _continuous(root: Path) -> None:
    """`streamt run --continuous` reports progress under the prefixed key; `status` reads it back."""
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "STREAMT_DEFINITIONS")}
    proc = subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "--continuous", "-s", "clean",
                             "-p", str(root)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: [lines.append(line) for line in proc.stdout or []], daemon=True)
    reader.start()
    try:
        wait_for(lambda: any("▶ clean" in line for line in lines), "the stream to start")
        (root / "data" / "events" / "b.json").write_text(rows(3, range(6, 8)))
        wait_for(lambda: any("+2 rows" in line for line in lines), "the new file's micro-batch")
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join(10)
    assert proc.returncode == 0, "".join(lines)
    with dg.DagsterInstance.from_config(str(root / ".streamt" / "dagster")) as instance:
        observed: list[Any] = instance.fetch_observations(CLEAN, limit=20).records
        statuses = [r.asset_observation.metadata["streamt/status"].value for r in observed]
        assert statuses[0] == "stopped" and "running" in statuses
        assert not instance.fetch_observations(dg.AssetKey(["clean"]), limit=1).records
    status = json.loads(streamt(root, "status", "--format", "json").stdout)
    clean = next(m for m in status["models"] if m["model"] == "clean")
    assert clean["status"] == "COMPLETE" and clean["rows"] == 2  # the continuous run's own total
