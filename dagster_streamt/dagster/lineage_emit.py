"""Emit a finished run's OpenLineage events once: from the sensor, or right away from ``streamt run``.

A small registry of emitted Dagster run ids (next to the outbox, under the project's ``.streamt/``)
makes the second emitter skip a run the first already queued. Queued events are durable (the
outbox), so "queued" is the point of no loss; delivery is retried in order on later calls."""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg

from ..api import LoadedProject
from ..core.files import atomic_write
from ..lineage.project_columns import column_lineage
from ..openlineage.events import EventBuilder
from ..openlineage.transport import DeliveryReport, emit_all, resolve_transport_config, state_dir
from .key_map import KeyMap
from .run_lineage import run_events

REGISTRY = "emitted_runs.json"
KEEP = 5000  # most recent run ids remembered


@contextmanager
def _registry(root: Path) -> Iterator[dict[str, float]]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / f"{REGISTRY}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = root / REGISTRY
        try:
            data: dict[str, float] = json.loads(path.read_text()) if path.exists() else {}
        except ValueError:
            data = {}
        yield data
        keep = dict(sorted(data.items(), key=lambda kv: kv[1])[-KEEP:])
        atomic_write(path, json.dumps(keep, sort_keys=True))


def emit_runs(loaded: LoadedProject, key_map: KeyMap, instance: dg.DagsterInstance,
              run_ids: list[tuple[str, float]]) -> tuple[DeliveryReport | None, dict[str, int]]:
    """Build and queue the events of runs not emitted yet (``(run_id, finished_ts)``), then deliver
    what is pending. Returns the report (None when OpenLineage is disabled) and the runs emitted, each
    with the number of events queued for it."""
    project = loaded.project
    config, _ = resolve_transport_config(project)
    if not project.runtime.openlineage.enabled or config.get("type") == "noop":
        return None, {}
    root = state_dir(project)
    keys = set(key_map.models.values())
    checks = {*key_map.tests.values(), *key_map.freshness.values()}
    builder: EventBuilder | None = None
    emitted: dict[str, int] = {}  # run id -> events queued for it
    with _registry(root) as done:
        events = []
        for run_id, finished in run_ids:
            if run_id in done:
                continue
            run = instance.get_run_by_id(run_id)
            if run is None or not _of_project(instance, run, keys, checks):
                done[run_id] = finished  # not a run of this project's models
                continue
            if builder is None:
                builder = EventBuilder(loaded, columns=column_lineage(loaded))
            mine = run_events(loaded, instance, run_id, builder, key_map)
            events += mine
            done[run_id] = finished
            emitted[run_id] = len(mine)
        report = emit_all(events, config, root)  # queued durably inside the registry lock: no double emit
    return report, emitted


def emit_live(loaded: LoadedProject, run_id: str, events: list[Any]) -> DeliveryReport | None:
    """Queue and deliver the events a run sends while it runs (a continuous run's START, RUNNING...), and
    record the run as emitted so the sensor does not rebuild its events when it ends. None when
    OpenLineage is disabled."""
    project = loaded.project
    config, _ = resolve_transport_config(project)
    if not project.runtime.openlineage.enabled or config.get("type") == "noop":
        return None
    root = state_dir(project)
    with _registry(root) as done:
        done.setdefault(run_id, time.time())
        return emit_all(events, config, root)


def _of_project(instance: dg.DagsterInstance, run: dg.DagsterRun, keys: set[dg.AssetKey],
                checks: set[dg.AssetCheckKey]) -> bool:
    """A run of the project's models or tests. A job's run (a schedule's, `streamt test`'s) has no
    selection of its own: what it set out to do is in its planned-materialization and planned-check
    events."""
    if set(run.asset_selection or ()) & keys or set(run.asset_check_selection or ()) & checks:
        return True
    planned = {dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED, dg.DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED}
    for record in instance.get_records_for_run(run.run_id, of_type=planned).records:
        event = record.event_log_entry.dagster_event
        data = event.event_specific_data if event is not None else None
        if getattr(data, "asset_key", None) in keys or getattr(data, "asset_check_key", None) in checks:
            return True
    return False
