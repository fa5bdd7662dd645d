"""Assertions judged from a running stream's progress, never from stored rows."""

from __future__ import annotations

from ..evaluate import check_max_lag, check_throughput
from ..params import MaxLag, Throughput
from ..results import Verdict
from ..sql_text import AssertionSql
from .base import AssertionKind, Evidence, Unevaluable, register


def _progress(a: AssertionSql, e: Evidence) -> None:
    if e.progress is None:
        raise Unevaluable(f"{a.assertion.name} is judged from streaming progress: run it as a continuous test "
                          "(or pass progress=StreamProgress(...))")


@register
class MaxLagKind(AssertionKind[MaxLag]):
    name = "max_lag"
    params = MaxLag
    evaluated_from = "progress"
    batch_violation = "lag_exceeded"

    def describe(self, p: MaxLag) -> str:
        return f"max_lag: event time {p.column} at most {p.max_seconds:g}s behind processing time"

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        _progress(a, e)
        assert e.progress is not None and isinstance(a.assertion.params, MaxLag)
        return check_max_lag(e.progress.max_event_time, e.progress.processing_time, a.assertion.params)


@register
class ThroughputKind(AssertionKind[Throughput]):
    name = "throughput"
    params = Throughput
    evaluated_from = "progress"
    batch_violation = "throughput_out_of_bounds"

    def describe(self, p: Throughput) -> str:
        bounds = [f">= {p.low:g}" if p.low is not None else "", f"<= {p.high:g}" if p.high is not None else ""]
        return f"throughput: rows/second {' and '.join(b for b in bounds if b)}"

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        _progress(a, e)
        assert e.progress is not None and isinstance(a.assertion.params, Throughput)
        return check_throughput(e.progress.rows_per_second, a.assertion.params)
