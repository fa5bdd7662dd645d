"""The OpenLineage sensor: running by default (it launches no run), reads finished runs from a cursor and
emits their events; every tick also retries events still pending after a backend outage. Each tick that
emits or retries anything says so in its log (the tick's "View logs"), run by run."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import dagster as dg
from dagster import SensorEvaluationContext

from ..api import LoadedProject
from .key_map import KeyMap

_DONE = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]


def build_lineage_sensor(loaded: LoadedProject, keys: KeyMap) -> dg.SensorDefinition:
    ol = loaded.project.runtime.openlineage

    @dg.sensor(name=f"{loaded.project.ident}_openlineage", minimum_interval_seconds=ol.sensor_interval_seconds,
               default_status=dg.DefaultSensorStatus.RUNNING if ol.enabled else dg.DefaultSensorStatus.STOPPED,
               description="Emits OpenLineage events for finished runs of this project's models "
                           "(runtime.openlineage); retries pending events after an outage.")
    def openlineage_sensor(context: SensorEvaluationContext) -> dg.SkipReason:
        from .lineage_emit import emit_runs  # OpenLineage's client: imported when a tick needs it

        cursor = json.loads(context.cursor) if context.cursor else {}
        since = float(cursor.get("since", 0.0))
        records = context.instance.get_run_records(
            filters=dg.RunsFilter(statuses=_DONE, updated_after=datetime.fromtimestamp(since, tz=UTC)),
            order_by="update_timestamp", ascending=True, limit=100)
        runs = [(r.dagster_run.run_id, r.update_timestamp.timestamp()) for r in records]
        report, emitted = emit_runs(loaded, keys, context.instance, runs)
        if runs:
            # runs whose events are queued durably are done: the outbox delivers them, in order
            context.update_cursor(json.dumps({"since": max(ts for _, ts in runs)}))
        if report is None:
            return dg.SkipReason("OpenLineage is disabled (runtime.openlineage.enabled: false)")
        status = f"{len(emitted)} new run(s); {report.delivered} event(s) delivered, {report.pending} pending"
        if report.pending and report.next_attempt_at:
            status += f" (next attempt {report.next_attempt_at.isoformat()})"
        for run_id, count in emitted.items():  # in the order the runs finished
            context.log.info(f"OpenLineage: {count} event(s) of run {run_id} queued for delivery")
        if emitted or report.delivered or report.pending:
            context.log.info(f"OpenLineage: {status}")
        return dg.SkipReason(status)

    return openlineage_sensor
