"""Project schedules become Dagster schedules over asset jobs; per-model automation conditions."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner

from dagster_streamt.cli.main import cli
from dagster_streamt.dagster import build_definitions

from ..helpers import write_project

FILES = {
    "stream_project.yml": """\
        project: {name: sched}
        schedules:
          - {name: nightly, cron: "0 2 * * *", select: "+report", timezone: Europe/Paris,
             description: Refresh the report and what it needs}
          - {name: paused, cron: "*/15 * * * *", select: "tag:raw", enabled: false}
          - {name: hourly, cron: "0 * * * *", select: "report", enabled: true}
        """,
    "sources/s.yml": "sources:\n  - name: s\n    format: json\n    path: d\n    columns: [{name: a}]\n",
    "models/m.yml": """\
        models:
          - name: staged
            tags: [raw]
            sql: SELECT a FROM {{ source("s") }}
          - name: report
            automation: {eager: true}
            sql: SELECT count(*) AS n FROM {{ ref("staged") }}
          - name: hourly_digest
            automation: {on_cron: "0 * * * *"}
            sql: SELECT a FROM {{ ref("staged") }}
          - name: unrelated
            sql: SELECT a FROM {{ source("s") }}
        """,
}


def test_schedules_target_the_selected_models(tmp_path: Path) -> None:
    defs = build_definitions(write_project(tmp_path, dict(FILES)))
    nightly = defs.resolve_schedule_def("nightly")
    assert (nightly.cron_schedule, nightly.execution_timezone) == ("0 2 * * *", "Europe/Paris")
    assert nightly.default_status == dg.DefaultScheduleStatus.STOPPED  # nothing runs until turned on
    assert defs.resolve_schedule_def("hourly").default_status == dg.DefaultScheduleStatus.RUNNING
    job = defs.resolve_job_def(nightly.job_name)
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == {"report", "staged"}
    ctx = dg.build_schedule_context(scheduled_execution_time=datetime(2026, 11, 21, 2, 0))
    requests = nightly.evaluate_tick(ctx).run_requests
    assert len(requests) == 1 and requests[0].tags["dagster/schedule_name"] == "nightly"
    paused = defs.resolve_schedule_def("paused")
    assert paused.default_status == dg.DefaultScheduleStatus.STOPPED
    assert {k.to_user_string() for k in defs.resolve_job_def(paused.job_name).asset_layer.selected_asset_keys} \
        == {"staged"}


def test_automations_start_stopped_unless_the_project_asks(tmp_path: Path) -> None:
    """Opening the UI starts no run: schedules and new-data sensors are stopped unless `enabled: true`,
    or `runtime.automations.default_status: running` (which an explicit `enabled: false` still beats).
    The lineage and alert sensors launch no runs and stay on."""
    files = {**FILES, "sources/s.yml": FILES["sources/s.yml"] + "  - name: t\n    format: json\n    path: e\n"
             "    sensor: {enabled: false}\n    freshness: {warn_after: 1h}\n"}
    stopped, running = dg.DefaultSensorStatus.STOPPED, dg.DefaultSensorStatus.RUNNING

    def statuses(defs: dg.Definitions) -> dict[str, str]:
        out = {s.name: s.default_status.value for s in defs.schedules or []}  # type: ignore[union-attr]
        return {**out, **{s.name: s.default_status.value for s in defs.sensors or []}}  # type: ignore[union-attr]

    quiet = statuses(build_definitions(write_project(tmp_path / "a", files)))
    assert quiet == {"nightly": "STOPPED", "paused": "STOPPED", "hourly": "RUNNING",
                     "sched_source_freshness": "STOPPED",
                     "s_new_data": stopped.value, "t_new_data": stopped.value, "sched_openlineage": running.value,
                     "sched_run_failure_alerts": running.value, "sched_changed_models": stopped.value}
    files["stream_project.yml"] += "runtime: {automations: {default_status: running}}\n"
    busy = statuses(build_definitions(write_project(tmp_path / "b", files)))
    assert busy == {**quiet, "nightly": "RUNNING", "sched_source_freshness": "RUNNING", "s_new_data": running.value,
                    "sched_changed_models": running.value}


@pytest.mark.parametrize(("runtime", "message"), [
    ("{automations: {default_status: runing}}", "stream_project.yml:2: error STR012: runtime: "
                                                "automations.default_status: Input should be 'stopped' or 'running'"),
    ("{automation: {default_status: running}}", 'did you mean "automations"?'),
])
def test_a_misspelt_automations_setting_is_a_located_error(tmp_path: Path, runtime: str, message: str) -> None:
    root = write_project(tmp_path, {**FILES, "stream_project.yml": FILES["stream_project.yml"].replace(
        "project: {name: sched}\n", f"project: {{name: sched}}\n        runtime: {runtime}\n")})
    out = CliRunner().invoke(cli, ["validate", "-p", str(root)])
    assert out.exit_code != 0 and message in out.output, out.output


def test_automation_conditions_on_models(tmp_path: Path) -> None:
    graph = build_definitions(write_project(tmp_path, dict(FILES))).resolve_asset_graph()
    report = graph.get(dg.AssetKey(["report"])).automation_condition
    digest = graph.get(dg.AssetKey(["hourly_digest"])).automation_condition
    assert report == dg.AutomationCondition.eager()
    assert digest == dg.AutomationCondition.on_cron("0 * * * *")
    assert graph.get(dg.AssetKey(["unrelated"])).automation_condition is None


def test_freshness_policies_on_sources_and_models(tmp_path: Path) -> None:
    from datetime import timedelta

    files = dict(FILES)
    files["sources/s.yml"] = ("sources:\n  - name: s\n    format: json\n    path: d\n    columns: [{name: a}]\n"
                              "    freshness: {warn_after: 1h, error_after: 6h}\n")
    files["models/extra.yml"] = ("models:\n  - name: legacy_sla\n    freshness: {max_lag_seconds: 300}\n"
                                 "    sql: SELECT a FROM {{ source('s') }}\n")
    graph = build_definitions(write_project(tmp_path, files)).resolve_asset_graph()
    src = graph.get(dg.AssetKey(["sources", "s"])).freshness_policy
    assert src == dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=6), warn_window=timedelta(hours=1))
    legacy = graph.get(dg.AssetKey(["legacy_sla"])).freshness_policy
    assert legacy == dg.FreshnessPolicy.time_window(fail_window=timedelta(seconds=300))
    assert graph.get(dg.AssetKey(["report"])).freshness_policy is None
