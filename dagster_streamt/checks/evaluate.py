"""Turn the numbers of the aggregate statement (or of streaming progress, or a schema) into verdicts.

Pure Python: no Spark here, so every rule about pass/fail (tolerances, match rates, bucket ratios,
ages) is unit-testable and shared by batch tests, micro-batch tests and progress-based checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..spec.suggest import did_you_mean
from .assertions import AcceptedTypes, MaxLag, Throughput
from .results import Verdict
from .spark_types import is_known_type, normalize_type, type_matches
from .sql import AssertionSql


def _int(value: Any) -> int:
    return int(value or 0)


def _epoch(value: datetime | float | int) -> float:
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
    lag = _epoch(processing_time) - _epoch(max_event_time)
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


def aggregate_verdict(a: AssertionSql, values: Mapping[str, Any], total: int, now: datetime) -> Verdict:
    """Judge one assertion from its columns of the aggregate statement."""
    p: Any = a.assertion.params
    v = {key: values.get(alias) for key, alias in ((k, a.alias(k)) for k in _keys(a))}
    match a.assertion.name:
        case "not_null" | "accepted_values" | "range" | "expression_is_true" | "custom_sql" if "failing" in v:
            failing = _int(v["failing"])
            observed = {c: _int(values.get(a.alias(f"null_{i}"))) for i, c in enumerate(p.columns)} \
                if a.assertion.name == "not_null" and len(p.columns) > 1 else {}
            return Verdict(failing == 0, failing, f"{failing} of {total} rows fail" if failing else "", observed)
        case "unique":
            dupes = _int(v["keyed"]) - _int(v["distinct"])
            ratio = dupes / total if total else 0.0
            ok = dupes == 0 or (p.tolerance > 0 and ratio <= p.tolerance)
            msg = f"{dupes} duplicate rows ({ratio:.2%} of {total})" if dupes else ""
            return Verdict(ok, dupes, msg, {"duplicate_ratio": ratio})
        case "relationships":
            missing, nonnull = _int(v["failing"]), _int(v["nonnull"])
            rate = 1 - missing / nonnull if nonnull else 1.0
            ok = missing == 0 or (p.match_rate < 1 and rate >= p.match_rate)
            msg = f"{missing} of {nonnull} non-null values have no match (match rate {rate:.2%})" if missing else ""
            return Verdict(ok, missing, msg, {"match_rate": rate})
        case "row_count":
            short = max(0, p.min - total) if p.min is not None else 0
            over = max(0, total - p.max) if p.max is not None else 0
            return Verdict(short == over == 0, short + over, f"{total} rows" if short or over else "",
                           {"row_count": total})
        case "freshness":
            return _freshness(v["latest"], p.max_age_seconds, p.column, now)
        case "custom_sql":
            return _expect(v["value"], p.expected, p.max_failures)
        case "distribution":
            return _distribution(p, _int(v["nonnull"]), [_int(v[f"bucket_{j}"]) for j in range(len(p.buckets))])
    return Verdict(False, message=f"{a.assertion.name} cannot be evaluated from an aggregate")


def _keys(a: AssertionSql) -> list[str]:
    prefix = f"a{a.assertion.index}_"
    return [alias.removeprefix(prefix) for alias, _ in a.aggregates]


def _freshness(latest_micros: Any, max_age: float, column: str, now: datetime) -> Verdict:
    if latest_micros is None:
        return Verdict(False, 0, f"no non-null {column!r} value: the data has no age", {})
    latest = int(latest_micros) / 1e6
    age = _epoch(now) - latest
    observed = {"latest": datetime.fromtimestamp(latest, UTC).isoformat(), "age_seconds": round(age, 3)}
    ok = age <= max_age
    return Verdict(ok, 0, "" if ok else f"newest {column} is {age:.0f}s old (max {max_age:g}s)", observed)


def _expect(value: Any, expected: int, max_failures: int | None = None) -> Verdict:
    if value is None:
        return Verdict(False, 0, "the query returned NULL instead of a count", {"value": None})
    number = float(value)
    shown = int(number) if number.is_integer() else number
    if max_failures is not None:
        ok = number <= max_failures
        return Verdict(ok, int(number), "" if ok else f"query returned {shown} failures, at most {max_failures} "
                       "allowed", {"value": shown, "max_failures": max_failures})
    ok = number == expected
    miss = int(abs(number - expected))
    return Verdict(ok, miss, "" if ok else f"query returned {shown}, expected {expected}",
                   {"value": shown, "expect": expected})


def _distribution(p: Any, nonnull: int, counts: list[int]) -> Verdict:
    ratios = [c / nonnull if nonnull else 0.0 for c in counts]
    bad = []
    for j, (bucket, ratio) in enumerate(zip(p.buckets, ratios, strict=True)):
        tol = bucket.tolerance if bucket.tolerance is not None else p.tolerance
        if abs(ratio - bucket.expected_ratio) > tol:
            bad.append(f"bucket {j + 1}: {ratio:.2%} vs expected {bucket.expected_ratio:.2%} ± {tol:.2%}")
    if nonnull == 0:
        bad = ["no non-null values to distribute"]
    return Verdict(not bad, len(bad), "; ".join(bad), {"ratios": [round(r, 6) for r in ratios]})


__all__ = ["aggregate_verdict", "check_max_lag", "check_throughput", "check_types"]
