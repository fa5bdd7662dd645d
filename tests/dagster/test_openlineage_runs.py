"""OpenLineage from real Dagster runs on Spark: the sensor emits once, `streamt run`'s emission is
not repeated by the sensor, failed and skipped models become FAIL and ABORT, every event validates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.key_map import KeyMap
from dagster_streamt.dagster.lineage_emit import emit_runs
from dagster_streamt.dagster.resources import SparkResource
from dagster_streamt.openlineage.events import node_run_id

from ..helpers import write_project
from ..openlineage.spec import assert_valid

pytestmark = pytest.mark.spark

FILES = {
    "stream_project.yml": """\
        project: {name: t}
        schedules:
          - {name: hourly_a, cron: "0 * * * *", select: a}
        """,
    "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data
            columns: [{name: id, type: bigint}, {name: v, type: double}]
        """,
    "models/m.yml": """\
        models:
          - name: a
            sql: SELECT id, v FROM {{ source("events") }}
          - name: broken
            sql: SELECT id, nope FROM {{ ref("a") }}
          - name: after_broken
            sql: SELECT id FROM {{ ref("broken") }}
        """,
    "tests/t.yml": "tests:\n  - name: a_ids\n    model: a\n    severity: warn\n"
                   "    assertions: [{not_null: {columns: [id]}}]\n",
}


def events_in(root: Path) -> list[dict[str, Any]]:
    path = root / ".streamt" / "openlineage.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_sensor_emits_each_run_once_with_fail_and_abort(spark: Any, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", dict(FILES))
    (root / "data").mkdir()
    (root / "data" / "e.json").write_text('{"id": 1, "v": 1.0}\n{"id": null, "v": 2.0}\n')
    defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
    sensor = next(iter(defs.sensors))
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    with dg.instance_for_test() as instance:
        result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance, raise_on_error=False,
            asset_selection=[dg.AssetKey([n]) for n in ("a", "broken", "after_broken")])
        assert not result.success
        tick = sensor(dg.build_sensor_context(instance=instance, cursor=None, definitions=defs))
        assert "1 new run(s)" in tick.skip_message and "0 pending" in tick.skip_message
        events = events_in(root)
        assert_valid(events)
        by = {(e["job"]["name"], e["eventType"]) for e in events}
        assert {("t.dagster_run", "START"), ("t.dagster_run", "FAIL"), ("t.a", "START"), ("t.a", "COMPLETE"),
                ("t.broken", "FAIL"), ("t.after_broken", "START"), ("t.after_broken", "ABORT"),
                ("t.test.a_ids", "COMPLETE")} <= by  # a warn test completes; its assertion says it failed
        test_end = next(e for e in events if e["job"]["name"] == "t.test.a_ids" and e["eventType"] == "COMPLETE")
        dq = test_end["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]
        assert [(a["assertion"], a.get("column"), a["success"]) for a in dq] == [("not_null", "id", False)]
        fail = next(e for e in events if e["job"]["name"] == "t.broken" and e["eventType"] == "FAIL")
        assert "nope" in fail["run"]["facets"]["errorMessage"]["message"]
        complete = next(e for e in events if e["job"]["name"] == "t.a" and e["eventType"] == "COMPLETE")
        assert complete["run"]["runId"] == node_run_id(result.run_id, "model.a")  # deterministic
        assert complete["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 2
        assert complete["run"]["facets"]["parent"]["run"]["runId"] == result.run_id
        start = next(e for e in events if e["job"]["name"] == "t.a" and e["eventType"] == "START")
        assert start["eventTime"] < complete["eventTime"]  # the model's own times, not the sensor's

        again = sensor(dg.build_sensor_context(instance=instance, cursor=None, definitions=defs))
        assert "0 new run(s)" in again.skip_message
        assert len(events_in(root)) == len(events)  # no duplicates, even from a reset cursor

        # `streamt run` emits right away; the sensor then skips that run
        second = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance, asset_selection=[dg.AssetKey(["a"])])
        keys = KeyMap.from_definitions(defs, "t")
        before = len(events_in(root))
        report, emitted = emit_runs(load(root), keys, instance, [(second.run_id, 0.0)])
        assert report is not None and report.pending == 0
        count = len(events_in(root))
        assert emitted == {second.run_id: count - before}  # what the sensor's tick log reports per run
        sensor(dg.build_sensor_context(instance=instance, cursor=None, definitions=defs))
        assert len(events_in(root)) == count
        assert_valid(events_in(root))

        # a schedule's run (a job run, no asset selection of its own): emitted with only its model
        scheduled = defs.resolve_job_def("hourly_a_job").execute_in_process(instance=instance)
        before = len(events_in(root))
        queued = emit_runs(load(root), keys, instance, [(scheduled.run_id, 0.0)])[1]
        new = events_in(root)[before:]
        assert queued == {scheduled.run_id: len(new)} == {scheduled.run_id: 6}
        assert {(e["job"]["name"], e["eventType"]) for e in new} == {
            ("t.dagster_run", "START"), ("t.dagster_run", "COMPLETE"), ("t.a", "START"), ("t.a", "COMPLETE"),
            ("t.test.a_ids", "START"), ("t.test.a_ids", "COMPLETE")}
        assert_valid(new)
