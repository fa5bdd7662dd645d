"""Tests as Dagster asset checks on real Spark: results and counts, blocking vs warn, check-only."""

from __future__ import annotations

import re
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import dagster as dg
import pytest
from deltalake import DeltaTable

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.resources import SparkResource
from dagster_streamt.spark.storage.warehouse import Warehouse

from ..conftest import StreamtHere
from ..helpers import write_project

pytestmark = pytest.mark.spark

FILES = {
    "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data
            columns: [{name: id, type: bigint}, {name: kind, type: string}, {name: v, type: double}]
        """,
    "models/m.yml": """\
        models:
          - name: clean
            sql: SELECT id, kind, v FROM {{ source("events") }}
          - name: downstream_of_clean
            sql: SELECT kind, sum(v) AS total FROM {{ ref("clean") }} GROUP BY kind
          - name: other
            sql: SELECT id FROM {{ source("events") }} WHERE v > 1
          - name: after_other
            sql: SELECT count(*) AS n FROM {{ ref("other") }}
        """,
}
DATA = "\n".join([
    '{"id": 1, "kind": "a", "v": 1.0}', '{"id": 2, "kind": "b", "v": 2.0}', '{"id": 2, "kind": "b", "v": 2.0}',
    '{"id": null, "kind": "zzz", "v": 3.0}', '{"id": 4, "kind": "a", "v": -1.0}',
]) + "\n"


def project(tmp_path: Path, tests: str) -> Path:
    root = write_project(tmp_path / "p", {**FILES, "tests/t.yml": tests})
    (root / "data").mkdir()
    (root / "data" / "e.json").write_text(DATA)
    return root


def run(root: Path, selection: dg.AssetSelection | None = None,
        instance: dg.DagsterInstance | None = None) -> dg.ExecuteInProcessResult:
    defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
    job = dg.define_asset_job("j", selection=selection or dg.AssetSelection.all())
    defs = dg.Definitions(assets=defs.assets, asset_checks=defs.asset_checks, resources=defs.resources, jobs=[job])
    return defs.resolve_job_def("j").execute_in_process(instance=instance or dg.DagsterInstance.ephemeral(),
                                                        raise_on_error=False)


def checks(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    return {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def mats(result: dg.ExecuteInProcessResult) -> list[str]:
    return sorted(e.asset_key.to_user_string() for e in result.get_asset_materialization_events())


def test_blocking_failure_stops_downstream_and_warn_does_not(spark: Any, tmp_path: Path) -> None:
    root = project(tmp_path, """\
        tests:
          - name: clean_is_valid
            model: clean
            severity: error
            assertions:
              - not_null: {columns: [id]}
              - accepted_values: {column: kind, values: [a, b]}
              - unique: {columns: [id]}
          - name: other_has_rows
            model: other
            severity: warn
            assertions:
              - row_count: {min: 100}
        """)
    result = run(root)
    # downstream_of_clean was blocked; the source's data is reported as its update
    assert mats(result) == ["after_other", "clean", "other", "sources/events"]
    got = checks(result)
    clean = got["clean_is_valid"]
    assert not clean.passed and clean.severity == dg.AssetCheckSeverity.ERROR
    md = {k: v.value for k, v in clean.metadata.items()}
    assert md["total_rows"] == 5
    assert md["failing_rows"] == 1 + 1 + 1  # a null id, kind 'zzz', one extra duplicate of id 2
    assert "| not_null | FAIL | 1 |" in md["assertions"]
    assert any(row.get("kind") == "zzz" for row in md["failing_rows_sample"])
    assert "SELECT" in md["sql"]
    warn = got["other_has_rows"]
    assert not warn.passed and warn.severity == dg.AssetCheckSeverity.WARN
    # the run fails and says why: the blocking check (the other models still ran)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "clean_is_valid" in failure.event_specific_data.error.message


def test_check_only_execution_and_source_checks(spark: Any, tmp_path: Path) -> None:
    root = project(tmp_path, """\
        tests:
          - name: clean_ids
            model: clean
            assertions: [{not_null: {columns: [id]}}]
          - name: events_unique
            source: events
            severity: warn
            assertions: [{unique: {columns: [id]}}, {row_count: {min: 5, max: 5}}]
        """)
    first = run(root, dg.AssetSelection.assets(dg.AssetKey(["clean"])))
    assert mats(first) == ["clean", "sources/events"]
    only = run(root, dg.AssetSelection.checks_for_assets(dg.AssetKey(["clean"])))
    assert mats(only) == []  # nothing rematerialized: the check read the stored table
    result = checks(only)["clean_ids"]
    assert not result.passed and result.metadata["failing_rows"].value == 1
    src = checks(run(root, dg.AssetSelection.checks_for_assets(dg.AssetKey(["sources", "events"]))))
    ev = src["events_unique"]
    assert not ev.passed and ev.metadata["failing_rows"].value == 1 and ev.metadata["total_rows"].value == 5


def test_source_tests_run_with_the_models_that_read_the_source(spark: Any, tmp_path: Path) -> None:
    """A source's tests run in the first run of its models after its data changed; a failed blocking one
    skips the models reading it (and their downstream) and fails the run; unchanged data keeps the verdict."""
    root = project(tmp_path, """\
        tests:
          - name: events_unique
            source: events
            severity: error
            assertions: [{unique: {columns: [id]}}]
        """)
    instance = dg.DagsterInstance.ephemeral()
    first = run(root, dg.AssetSelection.assets(dg.AssetKey(["clean"]), dg.AssetKey(["downstream_of_clean"])),
                instance)
    assert not first.success and mats(first) == ["sources/events"]  # the update, no model
    verdict = checks(first)["events_unique"]
    assert not verdict.passed and verdict.asset_key == dg.AssetKey(["sources", "events"])
    assert verdict.metadata["failing_rows"].value == 1 and len(verdict.metadata["streamt/judged"].value) == 24
    skipped = {e.asset_key.to_user_string(): e.asset_observation_data.asset_observation.metadata["error"].value
               for e in first.all_events if e.event_type_value == "ASSET_OBSERVATION"}
    assert skipped == {"clean": "skipped: blocking test events_unique on source events failed",
                       "downstream_of_clean": "skipped: blocking test events_unique on source events failed"}
    failure = next(e for e in first.all_events if e.event_type_value == "STEP_FAILURE")
    assert "blocking test events_unique on source events failed" in failure.event_specific_data.error.message

    # the same data: the verdict stands without a rerun, and still blocks
    again = run(root, dg.AssetSelection.assets(dg.AssetKey(["clean"])), instance)
    assert not again.success and checks(again) == {} and mats(again) == []
    # the duplicate removed: the test runs again, passes, and the models run
    (root / "data" / "e.json").write_text(DATA.replace('{"id": 2, "kind": "b", "v": 2.0}\n', "", 1))
    fixed = run(root, dg.AssetSelection.assets(dg.AssetKey(["clean"]), dg.AssetKey(["downstream_of_clean"])),
                instance)
    assert fixed.success and checks(fixed)["events_unique"].passed
    assert mats(fixed) == ["clean", "downstream_of_clean", "sources/events"]
    # each model's start and end in the run's log (one step runs them all); a model's downstream may start
    # before its result line is logged, never before it started
    said = [e.user_message for e in instance.all_logs(fixed.run_id) if e.user_message.startswith("streamt: ")]
    at = {text: next(i for i, m in enumerate(said) if m.startswith(text)) for text in (
        "streamt: clean started", "streamt: clean: 4 rows written", "streamt: downstream_of_clean started",
        "streamt: downstream_of_clean: 3 rows written")}
    assert at["streamt: clean started"] < at["streamt: clean: 4 rows written"], said
    assert at["streamt: clean started"] < at["streamt: downstream_of_clean started"] < \
        at["streamt: downstream_of_clean: 3 rows written"], said
    # and each model's own time, the slowest first, in the log and as a run tag the run's page shows
    tags = instance.get_run_by_id(fixed.run_id).tags
    [per_model] = [v for k, v in tags.items() if k.startswith("streamt/model_times/")]
    named = re.fullmatch(r"(\w+) ([\d.]+) s, (\w+) ([\d.]+) s", per_model)
    assert named and {named[1], named[3]} == {"clean", "downstream_of_clean"}, per_model
    assert float(named[2]) >= float(named[4]), per_model
    assert f"streamt: time per model, slowest first: {per_model}" in said, said
    table = DeltaTable(str(Warehouse.for_project(load(root).project).data_dir("downstream_of_clean")))
    assert sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: r["kind"]) == [
        {"kind": "a", "total": 0.0}, {"kind": "b", "total": 2.0}, {"kind": "zzz", "total": 3.0}]


def test_check_on_a_model_never_materialized_fails_clearly(spark: Any, tmp_path: Path) -> None:
    root = project(tmp_path, "tests:\n  - name: t\n    model: after_other\n"
                             "    assertions: [{row_count: {min: 1}}]\n")
    got = checks(run(root, dg.AssetSelection.checks_for_assets(dg.AssetKey(["after_other"]))))
    assert not got["t"].passed
    assert "after_other" in got["t"].metadata["error"].value


def test_streamt_test_cli(spark: Any, tmp_path: Path, streamt_here: StreamtHere) -> None:
    root = project(tmp_path, """\
        tests:
          - name: clean_ids
            model: clean
            assertions: [{not_null: {columns: [id]}}]
          - name: events_unique
            source: events
            severity: warn
            assertions: [{unique: {columns: [id]}}]
        """)
    run(root, dg.AssetSelection.assets(dg.AssetKey(["clean"])))

    def cli(*args: str) -> CompletedProcess[str]:
        return streamt_here("test", "-p", str(root), *args)

    r = cli()
    assert r.returncode == 1, r.stdout + r.stderr  # an error-severity test failed
    lines = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines() if ln and not ln.startswith(" ")}
    assert lines["clean_ids"][1:4] == ["model.clean", "FAIL", "1"]
    assert lines["events_unique"][1:4] == ["source.events", "warn", "1"]
    assert "tests: 0 passed, 2 failed" in r.stdout
    only_warn = cli("--select", "source:events")
    assert only_warn.returncode == 0 and "events_unique" in only_warn.stdout and "clean_ids" not in only_warn.stdout
    assert cli("--type", "continuous").stdout.strip() == "No tests selected."
