"""Continuous tests as a side query over what a stream model committed: exact violations per run,
history kept, reruns and replays never duplicate, failures keep their rows, progress-based checks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from dagster_streamt.checks.violation_store import read_violations, reset_violations
from dagster_streamt.checks.violations import run_continuous_tests
from dagster_streamt.spark import ModelResult, ProjectPaths
from dagster_streamt.spec.project import Project

from ..spark.helpers import jsonl, run

pytestmark = pytest.mark.spark

NOW = datetime(2024, 1, 2, tzinfo=UTC)
COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "status", "type": "string"},
           {"name": "amount", "type": "double"}, {"name": "ts", "type": "timestamp"}]
LIVE = {"name": "events_live", "model": "events", "type": "continuous", "assertions": [
    {"not_null": {"columns": ["status"]}},
    {"accepted_values": {"column": "status", "values": ["ok", "late"]}},
    {"range": {"column": "amount", "min": 0, "max": 100}},
]}
PER_BATCH = {"name": "events_batches", "model": "events", "type": "continuous", "severity": "warn", "assertions": [
    {"row_count": {"max": 3}},
    {"max_lag": {"column": "ts", "max_seconds": 60}},
]}
SPEED = {"name": "events_speed", "model": "events", "type": "continuous", "assertions": [
    {"throughput": {"min_per_second": 10}},
]}


def events(*rows: tuple[int, str | None, float]) -> str:
    return jsonl({"id": i, "status": s, "amount": a, "ts": f"2024-01-01T00:{i:02d}:00Z"} for i, s, a in rows)


FIRST = events((1, "ok", 10.0), (2, None, 20.0), (3, "bogus", 30.0), (4, "ok", -5.0), (5, "bogus", 500.0))
SECOND = events((6, "late", 50.0), (7, None, 200.0))


STATUSES = {"name": "statuses", "materialized": "table", "sql": "SELECT 'ok' AS status UNION ALL SELECT 'late'"}


def make_project(tmp_project: Any, *extra: dict[str, Any]) -> Project:
    return tmp_project({
        "sources": [{"name": "events_raw", "format": "json", "path": "landing", "columns": COLUMNS}],
        "models": [{"name": "events", "materialized": "stream",
                    "sql": 'SELECT id, status, amount, ts FROM {{ source("events_raw") }}'}, *extra],
        "tests": [LIVE, PER_BATCH, SPEED],
    }, {"landing/a.json": FIRST})


@pytest.fixture
def project(tmp_project: Any) -> Project:
    return make_project(tmp_project)


def model_run(spark: Any, project: Project) -> ModelResult:
    result = run(spark, project)["events"]
    assert result.ok, result.error
    return result


def check(spark: Any, project: Project, run_id: str, *names: str, **kwargs: Any) -> dict[str, Any]:
    tests = [project.tests[n] for n in names or ("events_live",)]
    return run_continuous_tests(spark, project, "events", tests, run_id, now=NOW, **kwargs)


def by_label(result: Any) -> dict[str, Any]:
    return {a.label: a for a in result.assertions}


def ids(spark: Any, project: Project, run_id: str | None = None) -> list[tuple[int, str]]:
    return sorted((json.loads(r.record)["id"], r.assertion)
                  for r in read_violations(spark, project, "events", run_id).collect())


def test_runs_record_exactly_their_rows_and_keep_history(spark: Any, project: Project) -> None:
    model_run(spark, project)
    live = check(spark, project, "r1")["events_live"]
    assert not live.passed and live.error is None and live.total_rows == 5
    got = by_label(live)
    assert {k: a.failing_rows for k, a in got.items()} == {"not_null": 1, "accepted_values": 2, "range": 2}
    assert got["not_null"].sample == [{"id": 2, "amount": 20.0, "ts": "2024-01-01T00:02:00.000Z"}]  # null: no key
    assert [s["id"] for s in got["accepted_values"].sample] == [3, 5]
    assert got["range"].observed["by_type"] == {"out_of_range": 2} and "WHERE" in got["range"].sql
    assert "events__microbatch" in live.sql

    # The check failed, and its violations are kept: the table is the record.
    table = read_violations(spark, project, "events", "r1").collect()
    assert len(table) == 5 and {(r.test, r.run_id, r.batch_id) for r in table} == {("events_live", "r1", 0)}
    assert {r.violation for r in table} == {"null_value", "unaccepted_value", "out_of_range"}
    assert {r.detected_at.astimezone(UTC) for r in table} == {NOW}
    data = ProjectPaths.from_project(project).warehouse / "events__violations" / "data"
    assert [p.name[:8] for p in (data / "run_id=r1" / "test=events_live").iterdir()] == ["batch-0-"]

    (project.root / "landing" / "b.json").write_text(SECOND)
    model_run(spark, project)
    second = check(spark, project, "r2")["events_live"]
    # it judged the 2 new rows, and the 5 bad rows r1 found are still in the table: it stays failing
    assert {k: (a.observed["violations"], a.observed["standing_violations"], a.failing_rows)
            for k, a in by_label(second).items()} == {"not_null": (1, 1, 2), "accepted_values": (0, 2, 2),
                                                      "range": (1, 2, 3)}
    assert second.total_rows == 2 and not second.passed and not by_label(second)["accepted_values"].passed
    assert by_label(second)["accepted_values"].message == \
        "2 violation(s) found by earlier runs still in events (until a full refresh)"
    assert by_label(second)["range"].message == ("1 violation(s) in the 2 row(s) added since the last run; "
                                                 "2 violation(s) found by earlier runs still in events "
                                                 "(until a full refresh)")
    assert ids(spark, project, "r2") == [(7, "not_null"), (7, "range")]
    assert len(ids(spark, project, "r1")) == 5 and len(ids(spark, project)) == 7

    model_run(spark, project)  # no new data: nothing to check, nothing duplicated
    idle = check(spark, project, "r3")["events_live"]
    assert idle.total_rows == 0 and all(a.observed["violations"] == 0 for a in idle.assertions)
    assert not idle.passed and sum(a.failing_rows for a in idle.assertions) == 7  # the known bad rows remain
    assert idle.severity == "warn"  # known rows: red, but no new alarm (no alert, no block) for an error test
    assert ids(spark, project, "r3") == [] and len(ids(spark, project)) == 7

    # A crash between writing batch 1's violations and committing it: the next run replays the batch,
    # takes over its violations, and the crashed run's copy is gone (no duplicates).
    checkpoint = ProjectPaths.from_project(project).checkpoint("events__violations") / "events_live"
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    replayed = check(spark, project, "r4")["events_live"]
    assert replayed.total_rows == 2 and sum(a.observed["violations"] for a in replayed.assertions) == 2
    assert sum(a.observed["standing_violations"] for a in replayed.assertions) == 5  # r1's; r2's copy is r4's now
    assert ids(spark, project, "r2") == [] and ids(spark, project, "r4") == [(7, "not_null"), (7, "range")]
    assert len(ids(spark, project)) == 7

    # Violations found under another definition of the test do not count against the new one
    narrowed = project.tests["events_live"].model_copy(update={"assertions": [{"not_null": {"columns": ["status"]}}]})
    changed = run_continuous_tests(spark, project, "events", [narrowed], "r4b", now=NOW)["events_live"]
    assert changed.passed and changed.total_rows == 0

    # A full refresh forgets what was checked, keeps the history; everything is checked again.
    reset_violations(project, "events")
    again = check(spark, project, "r5")["events_live"]
    assert again.total_rows == 7 and sum(a.failing_rows for a in again.assertions) == 7
    assert sum(a.observed["standing_violations"] for a in again.assertions) == 0  # the old output's are moot
    assert len(ids(spark, project)) == 14


def test_per_batch_aggregates_and_progress(spark: Any, project: Project) -> None:
    first = model_run(spark, project)
    results = check(spark, project, "p1", "events_batches", "events_speed",
                    progress=ModelResult("events", "stream", "success", processed_rows_per_second=2.5, batches=1))
    batches, speed = results["events_batches"], results["events_speed"]
    assert not batches.passed and batches.severity == "warn"
    row_count, lag = by_label(batches)["row_count"], by_label(batches)["max_lag"]
    assert row_count.failing_rows == 1 and row_count.sample[0]["rows"] == 5 and row_count.sample[0]["batch_id"] == 0
    # max_lag: newest event (2024-01-01 00:05) vs when the model wrote the file (now): far over 60 s.
    assert lag.failing_rows == 1 and lag.sample[0]["processing_time_from"] == "file_modification_time"
    assert lag.sample[0]["max_event_time"] == "2024-01-01T00:05:00+00:00" and lag.sample[0]["lag_seconds"] > 60
    assert not speed.passed and speed.assertions[0].failing_rows == 1
    assert speed.assertions[0].sample == [{"batches": 1, "message": "2.5 rows/s below the minimum 10",
                                           "model": "events", "processed_rows_per_second": 2.5, "rows_written": None}]
    table = read_violations(spark, project, "events", "p1").collect()
    assert sorted((r.assertion, r.violation, r.batch_id) for r in table) == [
        ("max_lag", "lag_exceeded", 0), ("row_count", "row_count_out_of_bounds", 0),
        ("throughput", "throughput_out_of_bounds", None)]

    assert first.processed_rows_per_second is not None  # the real ModelResult of the run
    fast = check(spark, project, "p2", "events_speed", progress=first)["events_speed"]
    assert fast.passed == (first.processed_rows_per_second >= 10)
    # a micro-batch that failed as a whole (row_count, max_lag) said so when it ran: no new rows, no failure
    assert check(spark, project, "p2b", "events_batches")["events_batches"].passed
    unknown = check(spark, project, "p3", "events_speed")["events_speed"]  # no progress: cannot judge
    assert not unknown.passed and "progress=" in (unknown.assertions[0].error or "")
    assert read_violations(spark, project, "events", "p3").count() == 0


def test_references_errors_and_clean_tests(spark: Any, tmp_project: Any) -> None:
    project = make_project(tmp_project, STATUSES)
    before = check(spark, project, "e1")["events_live"]  # the model never ran
    assert not before.passed and "not been materialized" in (before.error or "")
    model_run(spark, project)
    live = project.tests["events_live"]
    known = live.model_copy(update={"name": "known", "assertions": [
        {"relationships": {"column": "status", "to": 'ref("statuses")', "field": "status"}}]})
    clean = live.model_copy(update={"name": "clean", "assertions": [{"not_null": {"columns": ["id"]}}]})
    broken = live.model_copy(update={"name": "broken", "assertions": [
        {"expression_is_true": {"expression": "no_such_column > 0"}}]})
    got = run_continuous_tests(spark, project, "events", [known, clean, broken], "e2", now=NOW)
    assert [s["id"] for s in got["known"].assertions[0].sample] == [3, 5]  # statuses read as stored
    assert got["clean"].passed and got["clean"].total_rows == 5
    assert read_violations(spark, project, "events", "e2").count() == 2  # only `known` recorded anything
    assert not got["broken"].passed and "no_such_column" in (got["broken"].error or "")
    fixed = broken.model_copy(update={"assertions": [{"expression_is_true": {"expression": "amount >= 0"}}]})
    later = run_continuous_tests(spark, project, "events", [fixed], "e3", now=NOW)["broken"]
    assert later.total_rows == 5 and later.assertions[0].failing_rows == 1  # the same rows, checked after the fix
