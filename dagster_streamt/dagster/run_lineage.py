"""Rebuild a finished Dagster run's OpenLineage events from its event log, so the sensor and
``streamt run`` emit exactly the same events (same deterministic run ids) for the same run.

The models asset records what each model did: a materialization (with start/end times, rows,
schema) on success, an observation with ``streamt/status`` when it failed or was skipped, and one
check evaluation per test (with the per-assertion outcome)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import dagster as dg
from openlineage.client.event_v2 import RunEvent, RunState

from ..api import LoadedProject
from ..checks.results import TestResult
from ..core import metadata as meta
from ..core.results import ModelResult
from ..openlineage.events import DagsterRun, EventBuilder, assertions_from_tests
from .key_map import KeyMap
from .run_history import md_value

DagsterEventType = dg.DagsterEventType

_TERMINAL_RUN = {DagsterEventType.RUN_SUCCESS: RunState.COMPLETE, DagsterEventType.RUN_FAILURE: RunState.FAIL,
                 DagsterEventType.RUN_CANCELED: RunState.ABORT}
_TYPES = {DagsterEventType.RUN_START, *_TERMINAL_RUN, DagsterEventType.ASSET_MATERIALIZATION,
          DagsterEventType.ASSET_OBSERVATION, DagsterEventType.ASSET_CHECK_EVALUATION,
          DagsterEventType.ASSET_MATERIALIZATION_PLANNED}


def _ts(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def _window(md: dict[str, Any]) -> tuple[datetime, datetime] | None:
    """A partition's time window from its materialization (or a whole run's, as earlier versions wrote it)."""
    start, end = md_value(md, meta.PARTITION_START), md_value(md, meta.PARTITION_END)
    if start is not None and end is not None:
        return _ts(float(start)), _ts(float(end))
    old = md_value(md, meta.PARTITION_WINDOW)
    return (_ts(float(old[0])), _ts(float(old[1]))) if old else None


def _result(model: str, materialized: str, status: str, md: dict[str, Any]) -> ModelResult:
    """The model's result as the run recorded it in its materialization or observation metadata."""
    schema = md_value(md, "dagster/column_schema")
    rows = md_value(md, "run_rows_written", md_value(md, "rows_written"))  # a partitioned run's total
    return ModelResult(
        model=model, materialized=materialized, status="success" if status == "success" else
        "failed" if status == "failed" else "skipped", rows_written=int(rows) if isinstance(rows, int) else None,
        schema=[(c.name, c.type) for c in schema.columns] if schema else [],
        location=md_value(md, "location"), error=md_value(md, "error") or None,
        duration_s=float(md_value(md, "duration_s", 0.0) or 0.0))


def run_events(loaded: LoadedProject, instance: dg.DagsterInstance, run_id: str, builder: EventBuilder,
               keys: KeyMap) -> list[RunEvent]:
    """Parent START, each model's START + COMPLETE/FAIL/ABORT, each test run, parent end."""
    run = instance.get_run_by_id(run_id)
    if run is None:
        return []
    records = instance.get_records_for_run(run_id, of_type=_TYPES).records
    started = ended = None
    end_state, error = RunState.COMPLETE, None
    results: dict[str, tuple[ModelResult, datetime, datetime]] = {}
    tests: list[tuple[TestResult, datetime]] = []
    partition_window: tuple[datetime, datetime] | None = None
    planned: set[dg.AssetKey] = set()  # what the run set out to materialize (none for a check-only run)
    for rec in records:
        entry = rec.event_log_entry
        ev = entry.dagster_event
        if ev is None:
            continue
        if ev.event_type == DagsterEventType.ASSET_MATERIALIZATION_PLANNED:
            if ev.asset_key is not None:
                planned.add(ev.asset_key)
        elif ev.event_type == DagsterEventType.RUN_START:
            started = _ts(entry.timestamp)
        elif ev.event_type in _TERMINAL_RUN:
            ended, end_state = _ts(entry.timestamp), _TERMINAL_RUN[ev.event_type]
            err = getattr(ev.event_specific_data, "error", None)
            error = err.message.strip().splitlines()[0] if err is not None and err.message else ev.message
        elif ev.event_type in (DagsterEventType.ASSET_MATERIALIZATION, DagsterEventType.ASSET_OBSERVATION):
            mat = ev.step_materialization_data.materialization if ev.event_type == DagsterEventType.\
                ASSET_MATERIALIZATION else ev.asset_observation_data.asset_observation
            name = keys.model_of(mat.asset_key)
            md = dict(mat.metadata)
            if name is None or (ev.event_type == DagsterEventType.ASSET_OBSERVATION and meta.STATUS not in md):
                continue
            status = "success" if ev.event_type == DagsterEventType.ASSET_MATERIALIZATION else \
                md_value(md, meta.STATUS)
            mat_kind = loaded.compiled.models[name].materialized
            begin = _ts(md_value(md, meta.STARTED_AT, entry.timestamp))
            finish = _ts(md_value(md, meta.ENDED_AT, entry.timestamp))
            results[name] = (_result(name, mat_kind, status, md), begin, finish)
            window = _window(md)
            if window is not None:  # a partitioned run: nominalTime spans its partitions' windows
                partition_window = window if partition_window is None else (
                    min(partition_window[0], window[0]), max(partition_window[1], window[1]))
        elif ev.event_type == DagsterEventType.ASSET_CHECK_EVALUATION:
            compact = md_value(dict(ev.asset_check_evaluation_data.metadata), meta.RESULT)
            if compact:
                tests.append((TestResult.from_compact(compact), _ts(entry.timestamp)))
    if started is None:
        return []
    if ended is None:  # no terminal event (yet): the run record's end, else now
        record = instance.get_run_record_by_id(run_id)
        ended = _ts(record.end_time if record is not None and record.end_time else datetime.now(UTC).timestamp())
    chosen = [keys.model_of(k) for k in sorted(planned | set(run.asset_selection or ()))]
    for name in filter(None, chosen):  # cancelled or stopped before the model ran: ABORT, never silence
        if name not in results:
            reason = "run cancelled" if end_state is RunState.ABORT else f"not run: {error or 'run ended'}"
            results[name] = (_result(name, loaded.compiled.models[name].materialized, "skipped", {"error": reason}),
                             ended, ended)
    drun = DagsterRun(run_id, partition_window=partition_window)
    assertions = assertions_from_tests(loaded, [t for t, _ in tests])
    events: list[RunEvent] = [builder.run_event(drun, RunState.START, started)]
    for name, (result, begin, finish) in sorted(results.items(), key=lambda kv: (kv[1][1], kv[0])):
        events += builder.model_events(drun, result, begin, finish, assertions=[
            a for a in assertions if a.target != f"model.{name}"])
    for test, at in tests:
        events += builder.test_events(drun, test.test, assertions, _ts(at.timestamp() - test.duration_seconds), at)
    events.append(builder.run_event(drun, end_state, ended, error if end_state is RunState.FAIL else None))
    return events
