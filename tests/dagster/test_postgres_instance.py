"""A production-style Dagster instance on PostgreSQL (dagster-postgres, the `postgres` extra), with
DAGSTER_HOME set as every Dagster tool honours it: `streamt run`, two runs at once (a run and a
backfill), `streamt test` and `status` record to and read from it, and a real `dagster-daemon`
ticks the project's new-data sensor, launches the run it requests and emits its OpenLineage events.
The project's definitions.py prefixes the keys: the same keys everywhere, on PostgreSQL too."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from ..conftest import StreamtHere
from ..helpers import write_project
from ..spark.postgres import PG_BIN, postgres_url

pytestmark = [pytest.mark.spark, pytest.mark.slow]
if PG_BIN is None:
    pytest.skip("needs PostgreSQL's pg_ctl: apt-get install postgresql (scripts/setup-dev.sh)", allow_module_level=True)
__all__ = ["postgres_url"]  # the fixture

TIMEOUT_S = 300
DAY = "2026-01-0{d}T10:00:00Z"


def rows(day: int, ids: range) -> str:
    return "".join(json.dumps({"id": i, "ts": DAY.format(d=day), "amount": i * 10}) + "\n" for i in ids)


FILES = {
    "stream_project.yml": "project: {name: pg_shop}\nruntime: {openlineage: {sensor_interval_seconds: 2}}\n",
    "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data/events
            columns: [{name: id, type: bigint}, {name: ts, type: timestamp}, {name: amount, type: int}]
            sensor: {enabled: true, minimum_interval_seconds: 2}  # turned on: automations start stopped
        """,
    "models/m.yml": """\
        models:
          - name: clean
            materialized: stream
            sql: SELECT id, ts, amount FROM {{ source("events") }} WHERE id IS NOT NULL
          - name: totals
            materialized: table
            sql: SELECT count(*) AS n, sum(amount) AS amount FROM {{ ref("clean") }}
          - name: daily
            materialized: table
            partitioned_by: {column: ts, granularity: day, start: 2026-01-01, end: 2026-01-06}
            sql: |
              SELECT id, ts, amount FROM {{ source("events") }}
              WHERE ts >= {{ partition_start }} AND ts < {{ partition_end }}
        """,
    "tests/t.yml": "tests:\n  - name: clean_ids\n    model: clean\n    assertions: [{not_null: {columns: [id]}}]\n",
    "definitions.py": """\
        from pathlib import Path

        import dagster as dg

        from dagster_streamt.dagster import StreamtTranslator, build_definitions


        class Prefixed(StreamtTranslator):
            def get_model_key(self, model):
                return dg.AssetKey(["pg", model.name])


        defs = build_definitions(Path(__file__).parent, translator=Prefixed("pg_shop"))
        """,
    "data/events/a.json": rows(1, range(1, 4)) + rows(2, range(4, 6)),
}
CLEAN, TOTALS, DAILY = (dg.AssetKey(["pg", n]) for n in ("clean", "totals", "daily"))


def dagster_yaml(url: str) -> str:
    """Dagster's documented PostgreSQL storage, as users copy it (no ``scheme:``): the extra's pins make it work."""
    m = re.match(r"jdbc:postgresql://(?P<host>[^:/]+):(?P<port>\d+)/(?P<db>\w+)", url)
    assert m, url
    return f"""\
storage:
  postgres:
    postgres_db:
      username: postgres
      password: unused
      hostname: {m["host"]}
      port: {m["port"]}
      db_name: {m["db"]}
run_coordinator:
  module: dagster
  class: QueuedRunCoordinator
  config: {{max_concurrent_runs: 2, dequeue_interval_seconds: 1}}
telemetry:
  enabled: false
"""


def streamt(root: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", *args, "-p", str(root)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(proc: subprocess.Popen[str]) -> str:
    """The command's stdout, once it succeeded."""
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err
    return out


def test_runs_checks_backfill_and_daemon_sensors_on_postgres(postgres_url: str, tmp_path: Path,
                                                           streamt_here: StreamtHere) -> None:
    root = write_project(tmp_path / "shop", dict(FILES))
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(dagster_yaml(postgres_url))
    env = {k: v for k, v in os.environ.items() if k != "STREAMT_DEFINITIONS"}
    env["DAGSTER_HOME"] = str(home)

    here = {"DAGSTER_HOME": str(home)}
    out = streamt_here("run", "-s", "clean", "-p", str(root), env=here).stdout
    assert f"(instance {home})" in out and "1/1 model(s) succeeded" in out
    assert not (root / ".streamt" / "dagster").exists()  # DAGSTER_HOME wins over the project's folder

    # two runs at once on the same instance: the table downstream, and a two-day backfill
    both = [streamt(root, env, "run", "-s", "totals"),
            streamt(root, env, "backfill", "daily", "--from", "2026-01-01", "--to", "2026-01-02")]
    outs = [finished(p) for p in both]
    assert "1/1 model(s) succeeded" in outs[0] and "Backfilling 2 partition(s)" in outs[1]
    tested = json.loads(streamt_here("test", "--format", "json", "-p", str(root), env=here).stdout)
    assert [(r["test"], r["passed"]) for r in tested] == [("clean_ids", True)]

    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__module__.startswith("dagster_postgres")
        runs = instance.get_runs()
        assert len(runs) == 4 and all(r.is_success for r in runs)
        assert instance.get_latest_materialization_event(CLEAN).asset_materialization.metadata[
            "dagster/row_count"].value == 5
        assert instance.get_latest_materialization_event(TOTALS) is not None
        assert instance.get_materialized_partitions(DAILY) == {"2026-01-01", "2026-01-02"}
        assert instance.get_latest_asset_check_evaluation_record(dg.AssetCheckKey(CLEAN, "clean_ids")) is not None

    status = json.loads(finished(streamt(root, env, "status", "--format", "json")))
    assert {m["model"]: m["status"] for m in status["models"]} == {
        "clean": "COMPLETE", "daily": "COMPLETE", "totals": "COMPLETE"}

    # the daemon: the new-data sensor sees a new file and requests a run of clean and totals
    (root / "data" / "events" / "b.json").write_text(rows(3, range(6, 9)))
    (tmp_path / "workspace.yaml").write_text(f"load_from:\n  - python_file:\n      relative_path: "
                                             f"{root / 'definitions.py'}\n      location_name: pg_shop\n")
    log = tmp_path / "daemon.log"
    with log.open("wb") as sink:
        daemon = subprocess.Popen([str(Path(sys.executable).with_name("dagster-daemon")), "run", "-w",
                                   str(tmp_path / "workspace.yaml")], cwd=tmp_path, env=env, stdout=sink,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        sensed = None
        deadline = time.time() + TIMEOUT_S
        with dg.DagsterInstance.from_config(str(home)) as instance:
            while time.time() < deadline:
                assert daemon.poll() is None, log.read_text()[-4000:]
                found = [r for r in instance.get_runs() if r.tags.get("streamt/source") == "events"]
                if found and found[0].is_finished:
                    sensed = found[0]
                    break
                time.sleep(1)
            assert sensed is not None, f"no sensor run finished\n{log.read_text()[-4000:]}"
            assert sensed.is_success, log.read_text()[-4000:]
            mat = instance.get_latest_materialization_event(CLEAN)
            md = mat.asset_materialization.metadata  # 3 new rows; the stream's output now holds 8
            assert mat.run_id == sensed.run_id and (md["rows_written"].value, md["dagster/row_count"].value) == (3, 8)
            assert instance.get_latest_materialization_event(TOTALS).run_id == sensed.run_id
        lineage = root / ".streamt" / "openlineage.jsonl"
        while time.time() < deadline:  # the OpenLineage sensor's next tick emits the sensor's run
            events = [json.loads(line) for line in lineage.read_text().splitlines()] if lineage.exists() else []
            if any(e["run"]["runId"] == sensed.run_id and e["eventType"] == "COMPLETE" for e in events):
                break
            time.sleep(1)
        ends = [e for e in events if e["job"]["name"] == "pg_shop.dagster_run" and e["eventType"] == "COMPLETE"]
        assert sorted(e["run"]["runId"] for e in ends) == sorted({*(r.run_id for r in runs), sensed.run_id})
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                daemon.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(daemon.pid, signal.SIGKILL)
        daemon.wait(timeout=10)
