"""Run-failure sensor: for each model that failed in a run, an alert line in the log and, when
``runtime.alerts.webhook_url`` is set, one JSON message posted to it (Slack-compatible ``text``)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import dagster as dg
from dagster import RunFailureSensorContext

from ..api import LoadedProject
from ..core import metadata as meta
from .key_map import KeyMap
from .run_history import md_value


def failed_models(instance: dg.DagsterInstance, run_id: str, keys: KeyMap) -> list[dict[str, str]]:
    """Models the run recorded as failed (the models asset logs an observation for each)."""
    out = []
    for rec in instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION).records:
        obs = rec.event_log_entry.asset_observation
        md = dict(obs.metadata) if obs is not None else {}
        status = md_value(md, meta.STATUS)
        name = keys.model_of(obs.asset_key) if obs is not None else None
        if name is not None and status == "failed":
            out.append({"model": name, "error": str(md_value(md, "error", ""))})
    return sorted(out, key=lambda m: m["model"])


def alert_message(project: str, run_id: str, models: list[dict[str, str]], reason: str) -> dict[str, Any]:
    names = ", ".join(m["model"] for m in models) or "(no model ran)"
    return {"project": project, "run_id": run_id, "failed_models": models, "reason": reason,
            "text": f"[{project}] run {run_id[:8]} failed: {names}" + (f" - {reason}" if reason else "")}


def post(url: str, message: dict[str, Any], timeout: float = 10.0) -> int:
    req = urllib.request.Request(url, data=json.dumps(message, sort_keys=True).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return int(resp.status)


def build_failure_sensor(loaded: LoadedProject, keys: KeyMap) -> dg.SensorDefinition:
    url = loaded.project.runtime.alerts.webhook_url

    @dg.run_failure_sensor(name=f"{loaded.project.ident}_run_failure_alerts",
                           default_status=dg.DefaultSensorStatus.RUNNING,
                           description="Alerts on failed models: a log line, and a JSON POST to "
                                       "runtime.alerts.webhook_url when set.")
    def failure_alerts(context: RunFailureSensorContext) -> None:
        run_id = context.dagster_run.run_id
        models = failed_models(context.instance, run_id, keys)
        reason = context.failure_event.message or ""
        message = alert_message(loaded.project.name, run_id, models, reason.splitlines()[0] if reason else "")
        context.log.error(f"streamt alert: {message['text']}")
        if url:
            status = post(url, message)
            context.log.info(f"streamt alert posted to the webhook (HTTP {status})")

    return failure_alerts
