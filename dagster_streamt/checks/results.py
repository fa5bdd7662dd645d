"""What running a test produced: plain frozen dataclasses with JSON-safe contents, so the Dagster
layer can put them straight into check metadata and the CLI can print or dump them."""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Literal

from ..spec.models import Test

Severity = Literal["error", "warn"]


@dataclass(frozen=True)
class Verdict:
    """The judgement on one assertion before it is dressed as a result."""

    passed: bool
    failing_rows: int = 0
    message: str = ""
    observed: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AssertionResult:
    """One assertion's outcome. ``failing_rows`` counts offending rows for row-level assertions
    (not_null, unique's extra duplicates, accepted_values, range, relationships, custom_sql,
    expression_is_true); for aggregate ones it is the size of the miss (rows short of or over a
    row_count bound, |value - expect| for custom_sql ``sql:``, out-of-tolerance buckets for
    distribution, mismatched columns for accepted_types) and ``observed`` holds the measured values.
    ``error`` is set when the assertion could not be evaluated; such a result never passes."""

    index: int
    name: str
    label: str
    passed: bool
    failing_rows: int
    total_rows: int
    description: str
    sql: str = ""
    message: str = ""
    sample: list[dict[str, Any]] = field(default_factory=list)
    observed: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class TestResult:
    test: str
    target: str  # "model.orders" or "source.orders_raw"
    severity: Severity
    passed: bool
    assertions: tuple[AssertionResult, ...]
    duration_seconds: float
    total_rows: int = 0
    sql: str = ""  # the single aggregate statement that ran
    error: str | None = None  # the whole test could not run (relation missing...)

    __test__ = False  # not a pytest test class

    def compact(self) -> dict[str, Any]:
        """The small JSON form stored with a check evaluation (what OpenLineage assertions need)."""
        return {"test": self.test, "target": self.target, "severity": self.severity, "passed": self.passed,
                "duration_seconds": self.duration_seconds,
                "assertions": [{"index": a.index, "name": a.name, "passed": a.passed, "failing_rows": a.failing_rows,
                                "description": a.description, "error": a.error} for a in self.assertions]}

    @classmethod
    def from_compact(cls, data: dict[str, Any]) -> TestResult:
        """Read :meth:`compact` back (a check evaluation's ``streamt/result``)."""
        assertions = tuple(AssertionResult(
            index=int(a["index"]), name=str(a["name"]), label=str(a["name"]), passed=bool(a["passed"]),
            failing_rows=int(a.get("failing_rows") or 0), total_rows=0, description=str(a.get("description") or ""),
            error=a.get("error")) for a in data.get("assertions", []))
        severity: Severity = "warn" if data.get("severity") == "warn" else "error"
        return cls(test=str(data["test"]), target=str(data["target"]), severity=severity,
                   passed=bool(data["passed"]), assertions=assertions,
                   duration_seconds=float(data.get("duration_seconds") or 0.0))

    @property
    def failed(self) -> tuple[AssertionResult, ...]:
        return tuple(a for a in self.assertions if not a.passed)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "assertions": [asdict(a) for a in self.assertions]}


def model_tests(tests: Mapping[str, Test]) -> dict[str, list[Test]]:
    """The tests of each model (by name), in name order."""
    out: dict[str, list[Test]] = {}
    for _, test in sorted(tests.items()):
        kind, name = target_of(test)
        if kind == "model":
            out.setdefault(name, []).append(test)
    return out


def severity_of(test: Test, default: str = "error") -> Severity:
    """``severity:`` wins, then streamt's ``on_failure`` (``severity``, ``block_deploy``), then the project
    default; streamt's ``warning`` means ``warn``; anything else blocks (``error``)."""
    severity = test.declared_severity or default
    return "warn" if str(severity).lower() in ("warn", "warning") else "error"


def standing_only(result: TestResult) -> bool:
    """A continuous test that fails only on violations earlier runs found (rows still in the table), with
    no new one and nothing unevaluated: it stays red, as a warning, but neither alerts nor blocks again."""
    return not result.passed and result.error is None and all(
        a.passed or (a.error is None and not a.observed.get("violations")
                     and bool(a.observed.get("standing_violations")))
        for a in result.assertions)


def blocks_downstream(test: Test, default: str = "error") -> bool:
    """An error-severity test stops the models downstream of its target, unless it only watches the
    pipeline's pace (throughput, max_lag): a slow run is worth an alert, and its data is still right."""
    pace_only = all(next(iter(a), "") in ("max_lag", "throughput") for a in test.assertions)
    return severity_of(test, default) == "error" and not pace_only


def target_of(test: Test) -> tuple[str, str]:
    return ("model", test.model) if test.model is not None else ("source", str(test.source))


def json_safe(value: Any) -> Any:
    """Convert a Spark value (Row, Decimal, datetime, bytes, NaN...) into something json.dumps takes."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return str(value)  # keeps the exact digits
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    as_dict = getattr(value, "asDict", None)  # pyspark Row (a tuple): keep the field names
    if callable(as_dict):
        return {str(k): json_safe(v) for k, v in as_dict().items()}
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    return str(value)


__all__ = ["AssertionResult", "Severity", "TestResult", "Verdict", "json_safe", "severity_of", "target_of"]
