"""Run-failure alerts: a failed model produces a log line and a JSON POST to the project's webhook."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.resources import SparkResource

from ..helpers import write_project

pytestmark = pytest.mark.spark


class _Hook(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Hook.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_failed_model_posts_an_alert(spark: Any, tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        root = write_project(tmp_path / "p", {
            "stream_project.yml": f"project: {{name: alerting}}\nruntime:\n  alerts:\n"
                                  f"    webhook_url: http://127.0.0.1:{server.server_port}/hook\n",
            "sources/s.yml": "sources:\n  - name: s\n    format: json\n    path: data\n"
                             "    columns: [{name: id, type: bigint}]\n",
            "models/m.yml": "models:\n  - name: ok\n    sql: SELECT id FROM {{ source('s') }}\n"
                            "  - name: bad\n    sql: SELECT missing_col FROM {{ ref('ok') }}\n",
        })
        (root / "data").mkdir()
        (root / "data" / "a.json").write_text('{"id": 1}\n')
        defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
        sensor = next(s for s in defs.sensors if s.name == "alerting_run_failure_alerts")
        with dg.instance_for_test() as instance:
            result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
                instance=instance, raise_on_error=False)
            assert not result.success
            failure = next(e for e in result.all_events if e.event_type == dg.DagsterEventType.RUN_FAILURE)
            ctx = dg.build_run_status_sensor_context(
                sensor_name=sensor.name, dagster_instance=instance, dagster_run=result.dagster_run,
                dagster_event=failure).for_run_failure()
            sensor(ctx)
        assert len(_Hook.received) == 1
        msg = _Hook.received[0]
        assert msg["project"] == "alerting" and msg["run_id"] == result.run_id
        assert [m["model"] for m in msg["failed_models"]] == ["bad"]
        assert "missing_col" in msg["failed_models"][0]["error"]
        assert msg["text"].startswith(f"[alerting] run {result.run_id[:8]} failed: bad")
    finally:
        server.shutdown()


def test_failed_test_sends_its_streamt_alerts(spark: Any, tmp_path: Path) -> None:
    """streamt's `on_failure: [- alert: ...]` list: a Slack-style webhook gets the rendered message, a
    PagerDuty alert an Events API v2 trigger; a passing test sends nothing."""
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Hook.received = []
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        root = write_project(tmp_path / "p", {
            "sources/s.yml": "sources:\n  - name: s\n    format: json\n    path: data\n"
                             "    columns: [{name: id, type: bigint}, {name: amount, type: double}]\n",
            "models/m.yml": "models:\n  - name: orders\n    materialized: table\n"
                            "    sql: SELECT id, amount FROM {{ source('s') }}\n",
            "tests/t.yml": f"""\
                tests:
                  - name: amounts_positive
                    model: orders
                    assertions: [{{range: {{column: amount, min: 0}}}}]
                    on_failure:
                      - alert:
                          channel: slack
                          webhook: {url}/slack
                          message: "Data quality issue in {{{{ model.name }}}} ({{{{ test.name }}}})"
                      - alert:
                          channel: pagerduty
                          url: {url}/pd
                          routing_key: rk-1
                          severity: warning
                  - name: ids_present
                    model: orders
                    assertions: [{{not_null: {{columns: [id]}}}}]
                    on_failure: [{{alert: {{channel: slack, webhook: {url}/never}}}}]
                """,
        })
        (root / "data").mkdir()
        (root / "data" / "a.json").write_text('{"id": 1, "amount": 5}\n{"id": 2, "amount": -3}\n')
        defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
        with dg.instance_for_test() as instance:
            result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
                instance=instance, raise_on_error=False)
        checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
        assert checks == {"amounts_positive": False, "ids_present": True}
        slack, pd = sorted(_Hook.received, key=lambda m: "routing_key" in m)
        assert slack["text"] == "Data quality issue in orders (amounts_positive)"
        assert slack["failing_rows"] == 1 and slack["test"] == "amounts_positive"
        assert pd["routing_key"] == "rk-1" and pd["event_action"] == "trigger"
        assert pd["payload"]["severity"] == "warning" and pd["payload"]["source"] == "orders"
        assert len(_Hook.received) == 2  # the passing test sent nothing
    finally:
        server.shutdown()
