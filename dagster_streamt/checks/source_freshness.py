"""Source freshness: how long ago a source last received data, judged against its ``freshness:``
windows (``warn_after``/``error_after``, or streamt's ``warn_after_seconds``/``max_lag_seconds``).

File sources are measured by their newest data file's modification time (the arrival time, and no
JVM needed); ``freshness.column`` (or, for other sources, ``event_time.column``) by ``max(column)``
read through Spark. Shared by the Dagster asset checks and ``streamt test``; imports neither Dagster
nor Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from ..core.durations import parse_duration
from ..source_files import data_files, is_file_source, source_location
from ..spec.models import Freshness, Source
from ..spec.names import safe_identifier
from ..spec.project import Project
from .results import AssertionResult, TestResult


def check_name(source: Source) -> str:
    return f"{safe_identifier(source.name)}_freshness"


@dataclass(frozen=True)
class Windows:
    """Ages in seconds: past ``warn_s`` the check warns, past ``error_s`` it errors (either may be unset)."""

    warn_s: float | None
    error_s: float | None

    def describe(self) -> str:
        parts = [f"{_human(s)} ({level})" for level, s in (("warn", self.warn_s), ("error", self.error_s)) if s]
        return "last update at most " + " / ".join(parts) + " old"


def windows(fresh: Freshness | None) -> Windows | None:
    """Parsed like the Dagster freshness policy (dagster/schedules.py), except that ``warn_after``
    alone stays a warning here: a check, unlike a policy, can say so. A warn window not shorter than
    the error window is ignored."""
    if fresh is None:
        return None
    error = parse_duration(fresh.error_after) if fresh.error_after else fresh.max_lag_seconds
    warn = parse_duration(fresh.warn_after) if fresh.warn_after else fresh.warn_after_seconds
    if warn is not None and error is not None and float(warn) >= float(error):
        warn = None
    if warn is None and error is None:
        return None
    return Windows(None if warn is None else float(warn), None if error is None else float(error))


def measured_column(source: Source) -> str | None:
    """The column whose max is the last update; None for file sources measured by mtime."""
    if source.freshness and source.freshness.column:
        return source.freshness.column
    if is_file_source(source):
        return None
    return source.event_time.column if source.event_time else None


def measured_by(source: Source) -> str | None:
    """``mtime``, ``max(<column>)``, or None when there is no way to tell (rate, or no column)."""
    column = measured_column(source)
    if column:
        return f"max({column})"
    return "mtime" if is_file_source(source) else None


def checked_sources(project: Project) -> dict[str, tuple[Source, Windows, str]]:
    """Sources that get a freshness check: a window and a way to measure the last update."""
    out = {}
    for name in sorted(project.sources):
        source = project.sources[name]
        win, how = windows(source.freshness), measured_by(source)
        if win is not None and how is not None:
            out[name] = (source, win, how)
    return out


@dataclass(frozen=True)
class FreshnessOutcome:
    source: str
    passed: bool
    severity: Literal["warn", "error"]  # a failure's level; for a pass, the strictest window
    measured_by: str
    windows: Windows
    last_updated: datetime | None = None
    age_seconds: float | None = None
    message: str = ""
    detail: dict[str, Any] | None = None  # e.g. the newest file and the number of files


def judge(source: str, win: Windows, how: str, last: datetime | None, now: datetime, no_data: str,
          detail: dict[str, Any] | None = None) -> FreshnessOutcome:
    strictest: Literal["warn", "error"] = "error" if win.error_s is not None else "warn"
    if last is None:
        return FreshnessOutcome(source, False, "error", how, win, message=no_data, detail=detail)
    age = (now - last).total_seconds()
    shown = f"last update {last.isoformat()} ({_human(age, exact=False)} ago, measured by {how})"
    if win.error_s is not None and age > win.error_s:
        return FreshnessOutcome(source, False, "error", how, win, last, age,
                                f"{shown} is older than error_after {_human(win.error_s)}", detail)
    if win.warn_s is not None and age > win.warn_s:
        return FreshnessOutcome(source, False, "warn", how, win, last, age,
                                f"{shown} is older than warn_after {_human(win.warn_s)}", detail)
    return FreshnessOutcome(source, True, strictest, how, win, last, age, shown, detail)


def newest_file(project: Project, source: Source) -> tuple[datetime | None, dict[str, Any], str]:
    """(newest modification time, detail, message when there is none)."""
    location = source_location(project, source)
    files = data_files(location)
    if not files:
        why = "does not exist" if not location.exists() else "holds no data files"
        return None, {"path": str(location)}, f"no data: {location} {why}"
    newest = max(files, key=lambda f: (f.mtime_ns, f.path))
    last = datetime.fromtimestamp(newest.mtime_ns / 1e9, UTC)
    return last, {"path": str(location), "newest_file": newest.path, "files": len(files)}, ""


def newest_value(spark: Any, project: Project, source: Source, column: str) -> datetime | None:
    """``max(column)`` of the source's valid rows, as UTC. One read and no side effects: unlike the
    views tests use, nothing is counted or quarantined, since this runs every few minutes."""
    from ..spark.sources.sources import read_source, valid_rows
    from .sql import ident

    df = valid_rows(read_source(spark, project, source, streaming=False))
    row = df.selectExpr(f"unix_micros(CAST(max({ident(column)}) AS TIMESTAMP)) AS latest").first()
    latest = row["latest"] if row is not None else None
    return None if latest is None else datetime.fromtimestamp(int(latest) / 1e6, UTC)


def check_source_freshness(project: Project, source: Source, *, now: datetime | None = None,
                           session: Callable[[], Any] | None = None) -> FreshnessOutcome:
    """Measure and judge one source; every problem (no data, no Spark, a bad column) is a failed
    outcome with a message, never an exception. ``session`` returns a Spark session on demand."""
    now = now or datetime.now(UTC)
    win, how = windows(source.freshness), measured_by(source)
    if win is None or how is None:
        raise ValueError(f"source {source.name} has no measurable freshness")  # callers use checked_sources
    column = measured_column(source)
    failed = f"could not measure the freshness of source {source.name}"
    if column is None:
        try:
            last, detail, no_data = newest_file(project, source)
        except OSError as exc:  # e.g. a folder we may not list
            return FreshnessOutcome(source.name, False, "error", how, win, message=f"{failed}: {exc}")
        return judge(source.name, win, how, last, now, no_data, detail)
    if session is None:
        return FreshnessOutcome(source.name, False, "error", how, win,
                                message=f"{failed}: reading {how} needs a Spark session")
    try:
        last = newest_value(session(), project, source, column)
    except Exception as exc:  # Spark's errors (bad column, missing path, no JVM) become a failed check
        from ..spark.errors import describe_exception

        return FreshnessOutcome(source.name, False, "error", how, win, message=f"{failed}: {describe_exception(exc)}")
    return judge(source.name, win, how, last, now, f"no data: source {source.name} has no non-null {column!r}")


def as_test_result(outcome: FreshnessOutcome, duration_seconds: float) -> TestResult:
    """The outcome in ``streamt test``'s shape (one assertion named ``freshness``)."""
    observed: dict[str, Any] = {"measured_by": outcome.measured_by}
    if outcome.last_updated is not None:
        observed.update(last_updated=outcome.last_updated.isoformat(), age_seconds=round(outcome.age_seconds or 0, 3))
    assertion = AssertionResult(index=0, name="freshness", label="freshness", passed=outcome.passed, failing_rows=0,
                                total_rows=0, description=outcome.windows.describe(),
                                message="" if outcome.passed else outcome.message, observed=observed)
    return TestResult(test=f"{outcome.source}_freshness", target=f"source.{outcome.source}",
                      severity=outcome.severity, passed=outcome.passed, assertions=(assertion,),
                      duration_seconds=duration_seconds)


def _human(seconds: float, exact: bool = True) -> str:
    """``26h``, ``2.5h``, ``90s`` for configured windows (exact); ages are rounded (``7.0h``, ``42m``)."""
    s, sign = abs(seconds), "-" if seconds < 0 else ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        v = s / size
        if v < 1:
            continue
        if v.is_integer() or v >= 10:
            return f"{sign}{v:.0f}{unit}"
        if not exact or (v * 10).is_integer():
            return f"{sign}{v:.1f}{unit}"
    return f"{sign}{s:.0f}s"
