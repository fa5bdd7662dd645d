"""Each model's last run and each test's last result, read from the project's Dagster instance
(for ``streamt lineage --runs`` and ``streamt status``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import dagster as dg

from ..api import LoadedProject
from ..core import metadata as meta
from .key_map import KeyMap


@dataclass(frozen=True)
class LastRun:
    status: str  # COMPLETE | FAIL | ABORT | RUNNING (a continuous-mode stream)
    started: datetime
    finished: datetime
    rows: int | None  # the model's stored rows after the run (dagster/row_count), else the rows it wrote
    run_id: str
    error: str = ""

    @property
    def seconds(self) -> float:
        return (self.finished - self.started).total_seconds()


@dataclass(frozen=True)
class LastCheck:
    test: str
    target: str
    passed: bool | None  # None: planned or running
    severity: str
    at: datetime | None


CONTINUOUS = {"running": "RUNNING", "restarting": "RUNNING", "stopped": "COMPLETE"}


def md_value(md: Mapping[str, Any], key: str, default: Any = None) -> Any:
    """The plain value of metadata entry ``key`` (Dagster wraps each in a ``MetadataValue``), else ``default``."""
    v = md.get(key)
    return default if v is None else getattr(v, "value", v)


def _int(x: object) -> int | None:
    return int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _ts(x: Any, default: float) -> datetime:
    return datetime.fromtimestamp(float(x) if x is not None else default, tz=UTC)


def last_runs(loaded: LoadedProject, instance: dg.DagsterInstance, keys: KeyMap) -> dict[str, LastRun]:
    """Latest outcome per model (under the code location's keys): its latest materialization, or a
    later failed/skipped record."""
    out: dict[str, LastRun] = {}
    for name in sorted(loaded.compiled.models):
        key = keys.models.get(name)
        if key is None:
            continue
        best: LastRun | None = None
        mat = instance.get_latest_materialization_event(key)
        if mat is not None and mat.asset_materialization is not None:
            md = dict(mat.asset_materialization.metadata)
            ended = float(md_value(md, meta.ENDED_AT, mat.timestamp))
            began = md_value(md, meta.STARTED_AT, ended - float(md_value(md, "duration_s", 0.0)))
            rows = _int(md_value(md, "dagster/row_count"))
            if rows is None:  # the rows it wrote: a partitioned run's total (each partition's are its own)
                rows = _int(md_value(md, "run_rows_written", md_value(md, "rows_written")))
            # a continuous run's batch: the stream is still running (its "stopped" observation comes later)
            state = CONTINUOUS.get(str(md_value(md, meta.STATUS))) if md_value(md, meta.MODE) == meta.CONTINUOUS \
                else None
            best = LastRun(state or "COMPLETE", _ts(began, ended), _ts(ended, ended), rows, mat.run_id)
        obs = instance.fetch_observations(key, limit=1).records
        if obs:
            entry = obs[0].event_log_entry
            o = entry.asset_observation
            md = dict(o.metadata) if o is not None else {}
            status = md_value(md, meta.STATUS)
            newer = best is None or entry.timestamp > best.finished.timestamp()
            if status in ("failed", "skipped") and newer:
                best = LastRun("FAIL" if status == "failed" else "ABORT", _ts(md_value(md, meta.STARTED_AT),
                               entry.timestamp), _ts(md_value(md, meta.ENDED_AT), entry.timestamp), None,
                               entry.run_id, str(md_value(md, "error", "")))
            elif md_value(md, meta.MODE) == meta.CONTINUOUS and status in CONTINUOUS and newer:
                # a continuous run's state: its latest report
                at = _ts(None, entry.timestamp)
                best = LastRun(CONTINUOUS[str(status)], at, at, _int(md_value(md, "rows_written")), entry.run_id or "")
        if best is not None:
            out[name] = best
    return out


def last_checks(loaded: LoadedProject, instance: dg.DagsterInstance, keys: KeyMap) -> list[LastCheck]:
    """Each test's latest evaluation, whichever run wrote it (`streamt run`, `streamt test`, the UI)."""
    out = []
    for name, test in sorted(loaded.project.tests.items()):
        check = keys.tests.get(name)
        record = instance.get_latest_asset_check_evaluation_record(check) if check is not None else None
        ev = record.evaluation if record is not None else None
        severity = str(ev.severity.value).lower() if ev is not None else (test.severity or "error")
        at = datetime.fromtimestamp(record.create_timestamp, tz=UTC) if record is not None else None
        out.append(LastCheck(name, f"{'model' if test.model else 'source'}.{test.model or test.source}",
                             ev.passed if ev is not None else None, severity, at))
    return out
