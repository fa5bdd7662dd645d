"""Verdicts that need more than the aggregate statement: streaming progress (throughput, lag) and a
relation's schema (accepted types). Pure Python, shared by batch, micro-batch and progress checks;
the per-kind verdicts live with their kind in :mod:`.kinds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from ..spec.suggest import did_you_mean
from ..sql.spark_types import is_known_type, normalize_type, type_matches
from .params import AcceptedTypes, MaxLag, Throughput
from .results import Verdict


def epoch(value: datetime | float | int) -> float:
    """Seconds since the epoch; a naive datetime is read as UTC (Spark's progress times are UTC)."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    return float(value)


def check_throughput(rows_per_second: float | None, params: Throughput) -> Verdict:
    """Judge a streaming query's processed rows/second (``StreamingQueryProgress.processedRowsPerSecond``)."""
    if rows_per_second is None:
        return Verdict(False, message="no throughput measured yet (no streaming progress): cannot judge")
    rate = float(rows_per_second)
    low = params.low is not None and rate < params.low
    high = params.high is not None and rate > params.high
    message = (f"{rate:g} rows/s below the minimum {params.low:g}" if low and params.low is not None else
               f"{rate:g} rows/s above the maximum {params.high:g}" if high and params.high is not None else
               f"{rate:g} rows/s")
    return Verdict(not (low or high), 0, message, {"rows_per_second": rate})


def check_max_lag(max_event_time: datetime | float | None, processing_time: datetime | float | None,
                  params: MaxLag) -> Verdict:
    """Lag = processing time - newest event time seen (datetimes, naive = UTC, or epoch seconds)."""
    if max_event_time is None or processing_time is None:
        return Verdict(False, message=f"no event time observed in {params.column!r}: cannot judge the lag")
    lag = epoch(processing_time) - epoch(max_event_time)
    ok = lag <= params.max_seconds
    message = f"lag {lag:.1f}s" + ("" if ok else f" exceeds {params.max_seconds:g}s")
    return Verdict(ok, 0, message, {"lag_seconds": round(lag, 3)})


def check_types(params: AcceptedTypes, actual: Mapping[str, str]) -> Verdict:
    """Compare accepted types with ``actual`` {column: simpleString} (case-insensitive names)."""
    lower = {k.lower(): v for k, v in actual.items()}
    problems: list[str] = []
    for column, accepted in params.types.items():
        options = [accepted] if isinstance(accepted, str) else list(accepted)
        unknown = [t for t in options if not is_known_type(t)]
        have = lower.get(column.lower())
        if unknown:
            problems.append(f"{column}: unknown type name {unknown[0]!r}")
        elif have is None:
            hint = did_you_mean(column, actual)
            problems.append(f"{column}: no such column" + (f" ({hint})" if hint else ""))
        elif not any(type_matches(t, have) for t in options):
            problems.append(f"{column}: is {normalize_type(have) or have}, expected {' or '.join(options)}")
    return Verdict(not problems, len(problems), "; ".join(problems), {"types": dict(actual)})


__all__ = ["check_max_lag", "check_throughput", "check_types", "epoch"]
