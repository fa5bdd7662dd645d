"""Source freshness checks: file modification times or max(column), warn vs error windows, the
no-data case, the schedule that runs only them, and `streamt test`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.checks.source_freshness import check_source_freshness, checked_sources
from dagster_streamt.dagster import build_definitions

from ..helpers import write_project

SOURCES = """\
    sources:
      - name: fresh
        format: json
        path: data/fresh
        freshness: {warn_after: 1h, error_after: 6h}
      - name: late
        format: json
        path: data/late
        freshness: {warn_after: 1h, error_after: 6h}
      - name: stale
        format: json
        path: data/stale
        freshness: {warn_after_seconds: 3600, max_lag_seconds: 21600}
      - name: empty
        format: json
        path: data/empty
        freshness: {error_after: 6h}
      - name: warn_only
        format: csv
        path: data/stale
        freshness: {warn_after: 30m}
      - name: no_sla
        format: json
        path: data/fresh
      - name: clicks
        topic: clicks
        freshness: {error_after: 1h}
    """
AGES = {"fresh": timedelta(minutes=30), "late": timedelta(hours=2), "stale": timedelta(hours=7)}


def age_files(root: Path, ages: dict[str, timedelta]) -> None:
    """One data file per folder, last modified ``age`` ago (plus a newer bookkeeping file that must not count)."""
    for folder, age in ages.items():
        d = root / "data" / folder
        d.mkdir(parents=True, exist_ok=True)
        f = d / "part-0.json"
        f.write_text('{"id": 1}\n')
        then = time.time() - age.total_seconds()
        os.utime(f, (then, then))
        (d / "_SUCCESS").write_text("")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "p", {"stream_project.yml": "project: {name: fr}\n", "sources/s.yml": SOURCES})
    age_files(root, AGES)
    (root / "data" / "empty").mkdir()
    return root


def evaluations(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    return {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def test_freshness_checks_pass_warn_and_error(root: Path) -> None:
    defs = build_definitions(root)
    schedule = defs.resolve_schedule_def("fr_source_freshness")
    assert schedule.cron_schedule == "*/15 * * * *" and schedule.default_status == dg.DefaultScheduleStatus.STOPPED
    job = defs.resolve_job_def(schedule.job_name)
    assert job.asset_layer.selected_asset_keys == set()  # the checks only: no model runs
    assert {k.name for k in job.asset_layer.asset_graph.asset_check_keys} == {
        "fresh_freshness", "late_freshness", "stale_freshness", "empty_freshness", "warn_only_freshness"}
    assert len(schedule.evaluate_tick(dg.build_schedule_context(
        scheduled_execution_time=datetime(2026, 1, 1, 0, 15))).run_requests or []) == 1

    result = job.execute_in_process(instance=dg.DagsterInstance.ephemeral())
    assert result.success  # a stale source fails its check, not the run
    ev = evaluations(result)
    assert ev["fresh_freshness"].passed
    assert ev["fresh_freshness"].asset_key == dg.AssetKey(["sources", "fresh"])
    md = {k: v.value for k, v in ev["fresh_freshness"].metadata.items()}
    assert md["measured_by"] == "mtime" and md["warn_after_s"] == 3600 and md["error_after_s"] == 21600
    assert 1700 < md["age_seconds"] < 1900 and md["newest_file"] == "part-0.json" and md["files"] == 1
    assert abs(datetime.fromisoformat(md["last_updated"]) - (datetime.now(UTC) - AGES["fresh"])) < timedelta(minutes=1)

    late = ev["late_freshness"]
    assert not late.passed and late.severity == dg.AssetCheckSeverity.WARN
    assert "older than warn_after 1h" in late.description
    stale = ev["stale_freshness"]  # streamt's seconds spelling
    assert not stale.passed and stale.severity == dg.AssetCheckSeverity.ERROR
    assert "older than error_after 6h" in stale.description
    empty = ev["empty_freshness"]
    assert not empty.passed and empty.severity == dg.AssetCheckSeverity.ERROR
    assert "no data" in empty.description and "holds no data files" in empty.description
    warn_only = ev["warn_only_freshness"]  # only warn_after: late is a warning, never an error
    assert not warn_only.passed and warn_only.severity == dg.AssetCheckSeverity.WARN

    # the sources' data reported as their updates, which Dagster's freshness policy counts from; data first
    # seen already older than the policy allows (stale, warn_only) is not, nor an empty folder
    instance = dg.DagsterInstance.ephemeral()
    updates = {e.asset_key.to_user_string(): e.step_materialization_data.materialization
               for e in job.execute_in_process(instance=instance).get_asset_materialization_events()}
    assert sorted(updates) == ["sources/fresh", "sources/late"]
    fresh = updates["sources/fresh"]
    then = (datetime.now(UTC) - AGES["fresh"]).timestamp()
    assert abs(fresh.metadata["dagster/last_updated_timestamp"].value - then) < 60
    assert fresh.metadata["files"].value == 1 and len(fresh.tags["dagster/data_version"]) == 24
    assert fresh.tags["dagster/data_version"] != updates["sources/late"].tags["dagster/data_version"]
    # the same data is not reported twice; a new file is
    assert job.execute_in_process(instance=instance).get_asset_materialization_events() == []
    (root / "data" / "fresh" / "part-1.json").write_text('{"id": 2}\n')
    again = job.execute_in_process(instance=instance).get_asset_materialization_events()
    assert [e.asset_key.to_user_string() for e in again] == ["sources/fresh"]
    assert again[0].step_materialization_data.materialization.tags["dagster/data_version"] != \
        fresh.tags["dagster/data_version"]


def test_checked_sources_cron_override_and_diagnostics(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "stream_project.yml": "project: {name: fr}\nruntime: {freshness_checks_cron: '0 * * * *'}\n",
        "sources/s.yml": SOURCES,
    })
    loaded = load(root)
    assert sorted(checked_sources(loaded.project)) == ["empty", "fresh", "late", "stale", "warn_only"]
    warning = next(d for d in loaded.diagnostics if d.code == "STR070")  # kafka without a column: never checked
    assert "clicks" in warning.message and not warning.is_error
    assert build_definitions(root, loaded=loaded).resolve_schedule_def("fr_source_freshness").cron_schedule \
        == "0 * * * *"

    bad = write_project(tmp_path / "bad", {
        "stream_project.yml": "project: {name: fr}\nruntime: {freshness_checks_cron: 'often'}\n",
        "sources/s.yml": "sources:\n  - name: s\n    format: json\n    path: d\n    freshness: {warn_after: 1x}\n",
        "tests/t.yml": "tests:\n  - name: s_freshness\n    source: s\n    assertions: [{row_count: {min: 1}}]\n",
    })
    errors = [d.format() for d in load(bad).errors]
    assert any("freshness_checks_cron" in e and "invalid cron expression 'often'" in e for e in errors), errors
    assert any("cannot read duration '1x'" in e for e in errors), errors


def test_streamt_test_reports_source_freshness(root: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "test", "-p", str(root), "--type", "freshness"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr  # stale and empty are errors
    rows = {ln.split()[0]: ln.split()[1:3] for ln in r.stdout.splitlines() if ln.endswith(tuple("0123456789"))}
    assert rows["fresh_freshness"] == ["source.fresh", "pass"]
    assert rows["late_freshness"] == ["source.late", "warn"]
    assert rows["stale_freshness"] == ["source.stale", "FAIL"]
    assert "tests: 1 passed, 4 failed" in r.stdout
    only_fresh = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "test", "-p", str(root), "-s", "fresh"],
                                capture_output=True, text=True, timeout=120)
    assert only_fresh.returncode == 0 and "fresh_freshness" in only_fresh.stdout and "late" not in only_fresh.stdout


@pytest.mark.spark
def test_max_event_time_through_spark(spark: Any, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"stream_project.yml": "project: {name: fr}\n", "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data
            columns: [{name: id, type: bigint}, {name: ts, type: timestamp}]
            freshness: {column: ts, warn_after: 1h, error_after: 6h}
          - name: wrong_column
            format: json
            path: data
            columns: [{name: id, type: bigint}, {name: ts, type: timestamp}]
            freshness: {column: nope, error_after: 6h}
        """})
    (root / "data").mkdir()
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    (root / "data" / "e.json").write_text('{"id": 1, "ts": "2026-03-01T08:00:00Z"}\n'
                                          '{"id": 2, "ts": "2026-03-01T09:30:00Z"}\nnot json\n')
    project = load(root).project
    events, wrong = project.sources["events"], project.sources["wrong_column"]
    outcome = check_source_freshness(project, events, now=now, session=lambda: spark)
    assert outcome.measured_by == "max(ts)" and outcome.last_updated == datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    assert not outcome.passed and outcome.severity == "warn" and outcome.age_seconds == 9000
    later = check_source_freshness(project, events, now=now + timedelta(hours=5), session=lambda: spark)
    assert not later.passed and later.severity == "error"
    assert check_source_freshness(project, events, now=now - timedelta(hours=2), session=lambda: spark).passed
    bad = check_source_freshness(project, wrong, now=now, session=lambda: spark)
    assert not bad.passed and bad.severity == "error"
    assert bad.message.startswith("could not measure the freshness of source wrong_column: ") and "nope" in bad.message
    assert "Traceback" not in bad.message and len(bad.message) < 700
