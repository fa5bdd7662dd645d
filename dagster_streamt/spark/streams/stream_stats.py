"""Running totals of a long-running query, from its progress reports, for continuous mode.

Spark keeps only the last ``numRecentProgressUpdates`` reports per query and a restarted query starts
a new list, so totals are accumulated here: each poll adds the reports newer than the last one seen.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..run.output import OUT_METRIC
from ..run.progress import NO_WATERMARK, input_rows, observed_total


@dataclass(frozen=True)
class ModelProgress:
    """One model's progress in a continuous run. Totals count from the start of this run; ``new_*``
    since the previous report; rates are the last micro-batch's (0 when idle since the last report)."""

    model: str
    trigger: str
    running: bool
    batch_id: int | None
    batches: int  # micro-batches that processed data
    new_batches: int
    rows_written: int
    new_rows: int
    input_rows: int
    input_rows_per_second: float | None
    processed_rows_per_second: float | None
    watermark: str | None
    lag_s: float | None  # now - watermark: how far behind real time the closed event time is
    latency_s: float | None  # how long the last micro-batch with data took
    restarts: int
    at: float  # epoch seconds of this report
    kafka_offsets: dict[str, dict[str, int]] | None = None  # topic -> partition -> next offset, last batch
    offsets_behind: int | None = None  # Kafka records not read yet (Spark's maxOffsetsBehindLatest, summed)
    lag_by_source: dict[str, int] | None = None  # the same per Kafka source (its topics, comma-joined)

    def lag_text(self) -> str:
        if self.lag_s is not None:
            return f"lag {self.lag_s:,.1f} s"
        return f"batch latency {self.latency_s:.2f} s" if self.latency_s is not None else "lag -"


def watermark_age(watermark: str | None, now: float) -> float | None:
    if not watermark:
        return None
    try:
        return now - datetime.fromisoformat(watermark.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class ProgressTracker:
    def __init__(self, model: str, trigger: str) -> None:
        self.model = model
        self.trigger = trigger
        self.restarts = 0
        self._last_ts = ""  # ISO-8601 UTC timestamps of reports sort as strings
        self._batch_id: int | None = None
        self._batches = self._rows = self._input = 0
        self._new_batches = self._new_rows = 0
        self._seen_any = False
        self._last_data: Any = None  # the last report with data since the previous snapshot
        self._latency: float | None = None
        self._watermark: str | None = None
        self._offsets: dict[str, dict[str, int]] | None = None
        self._behind: int | None = None
        self._lag_by: dict[str, int] | None = None

    def consume(self, progresses: Sequence[Any]) -> int:
        """Add the reports not seen yet; return how many of them processed data."""
        fresh = [p for p in progresses if (p.timestamp or "") > self._last_ts]
        with_data = 0
        for p in fresh:
            self._last_ts = p.timestamp
            self._seen_any = True
            self._batch_id = p.batchId
            rows = observed_total([p], OUT_METRIC, "rows")
            self._rows += rows
            self._new_rows += rows
            self._input += input_rows([p])
            self._kafka(p)
            wm = (p.eventTime or {}).get("watermark")
            if wm and not wm.startswith(NO_WATERMARK):
                self._watermark = wm
            if (p.numInputRows or 0) > 0:
                with_data += 1
                self._last_data = p
                self._latency = (p.durationMs or {}).get("triggerExecution", 0) / 1000
        self._batches += with_data
        self._new_batches += with_data
        return with_data

    def _kafka(self, p: Any) -> None:
        """The Kafka positions a report gives: each topic partition's next offset, and how far behind the
        latest offsets the query is (Spark's source metrics; absent for other sources)."""
        offsets: dict[str, dict[str, int]] = {}
        lag_by: dict[str, int] = {}
        for source in p.sources or ():
            if not (source.description or "").startswith("Kafka"):
                continue
            try:
                ends = json.loads(source.endOffset or "{}")
                for topic, parts in ends.items():
                    offsets.setdefault(topic, {}).update({str(k): int(v) for k, v in sorted(parts.items())})
            except (TypeError, ValueError, AttributeError):
                ends = {}
            lag = (source.metrics or {}).get("maxOffsetsBehindLatest")
            if lag is not None:
                name = ",".join(sorted(ends)) or source.description
                lag_by[name] = lag_by.get(name, 0) + int(float(lag))
        if offsets:
            self._offsets = offsets
            self._lag_by = lag_by or None
            self._behind = sum(lag_by.values()) if lag_by else None

    def snapshot(self, running: bool = False) -> ModelProgress:
        """The progress so far; starts a new ``new_*`` window."""
        now = time.time()
        p = self._last_data
        idle = 0.0 if self._seen_any else None
        out = ModelProgress(
            model=self.model, trigger=self.trigger, running=running, batch_id=self._batch_id,
            batches=self._batches, new_batches=self._new_batches, rows_written=self._rows, new_rows=self._new_rows,
            input_rows=self._input,
            input_rows_per_second=float(p.inputRowsPerSecond) if p is not None else idle,
            processed_rows_per_second=float(p.processedRowsPerSecond) if p is not None else idle,
            watermark=self._watermark, lag_s=watermark_age(self._watermark, now), latency_s=self._latency,
            restarts=self.restarts, at=now, kafka_offsets=self._offsets, offsets_behind=self._behind,
            lag_by_source=self._lag_by)
        self._new_batches = self._new_rows = 0
        self._last_data = None
        return out
