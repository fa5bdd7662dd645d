"""Read what a finished streaming query did from its progress reports, and parse triggers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...spec.model import real_time_interval
from ..errors import ModelRunError

IN_PREFIX = "streamt_in_"
NO_WATERMARK = "1970-01-01T00:00:00"
_INTERVAL = re.compile(r"^\d+(\.\d+)?\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?)$", re.I)


def _metric(progress: Any, metric: str, name: str) -> int:
    row = (getattr(progress, "observedMetrics", None) or {}).get(metric)
    if row is None:
        return 0
    values = row if isinstance(row, dict) else row.asDict()
    if name not in values and {"values", "schema"} <= values.keys():
        # Spark Connect clients (4.x) hand back the serialized form: Row(values=[..], schema={..})
        names = [f["name"] for f in values["schema"]["fields"]]
        values = dict(zip(names, values["values"], strict=False))
    return int(values.get(name) or 0)


def observed_total(progresses: Sequence[Any], metric: str, name: str) -> int:
    """Sum of an ``observe()`` metric over all micro-batches."""
    return sum(_metric(p, metric, name) for p in progresses)


def written_rows(progresses: Sequence[Any], metric: str) -> int | None:
    """Rows the query wrote (its ``observe()`` count over all micro-batches); None when a batch that
    read rows reports no count (unknown, not 0)."""
    for p in progresses:
        if (p.numInputRows or 0) > 0 and (getattr(p, "observedMetrics", None) or {}).get(metric) is None:
            return None
    return observed_total(progresses, metric, "rows")


@dataclass(frozen=True)
class StreamStats:
    input_rows: int
    rows_written: int | None
    batches: int
    last_watermark: str | None
    input_rows_per_second: float | None
    processed_rows_per_second: float | None
    arrival_lag_s: float | None = None  # end of the last batch - newest arrival time of its input records


def input_rows(progresses: Sequence[Any]) -> int:
    """Rows the inputs delivered: our ``observe()`` counters when present (Spark's own numInputRows
    counts rows after filters pushed into the file scan), else Spark's number."""
    total = 0
    for p in progresses:
        metrics = getattr(p, "observedMetrics", None) or {}
        names = [m for m in metrics if m.startswith(IN_PREFIX)]
        total += sum(_metric(p, m, "rows") for m in names) if names else int(p.numInputRows or 0)
    return total


def _arrival_lag(progress: Any) -> float | None:
    """Seconds from the newest input record's arrival (its file's modification time, recorded by the
    ``arrival`` metric of the input counters) to the end of the micro-batch that processed it."""
    from datetime import datetime

    metrics = getattr(progress, "observedMetrics", None) or {}
    newest = max((_metric(progress, m, "arrival") for m in metrics if m.startswith(IN_PREFIX)), default=0)
    if not newest:
        return None
    started = datetime.fromisoformat(str(progress.timestamp).replace("Z", "+00:00")).timestamp()
    duration = float((getattr(progress, "durationMs", None) or {}).get("triggerExecution") or 0) / 1000
    return round(started + duration - newest / 1e6, 3)


def summarize(progresses: Sequence[Any], out_metric: str) -> StreamStats:
    """Totals over the run; rates and watermark from the last batch that saw data."""
    with_data = [p for p in progresses if (p.numInputRows or 0) > 0]
    last = with_data[-1] if with_data else None
    watermark = None
    for p in reversed(progresses):
        wm = (p.eventTime or {}).get("watermark")
        if wm and not wm.startswith(NO_WATERMARK):  # Spark reports epoch 0 before any event time
            watermark = wm
            break
    return StreamStats(
        input_rows=input_rows(progresses),
        rows_written=written_rows(progresses, out_metric),
        batches=len(with_data),
        last_watermark=watermark,
        input_rows_per_second=float(last.inputRowsPerSecond) if last is not None else None,
        processed_rows_per_second=float(last.processedRowsPerSecond) if last is not None else None,
        arrival_lag_s=_arrival_lag(last) if last is not None else None,
    )


def trigger_options(trigger: str | None, model: str, real_time: bool = False) -> dict[str, Any]:
    """``advanced.spark.trigger`` as keyword arguments of ``DataStreamWriter.trigger``.

    ``available_now`` (default): process what arrived since the last run, then stop. ``once``: the
    same in one batch. An interval (``"30 seconds"``, ``processing_time: 30 seconds``): a micro-batch
    per interval in continuous mode (a run still processes what is there and stops). ``real_time``
    [interval]: ``{"realTime": interval}`` when ``real_time`` (continuous mode asks), else availableNow:
    a one-shot run processes what is there and stops.
    """
    try:
        checkpoint_every = real_time_interval(trigger)
    except ValueError as exc:
        raise ModelRunError(f"model {model}: {exc}", model) from exc
    if checkpoint_every is not None:
        return {"realTime": checkpoint_every} if real_time else {"availableNow": True}
    value = (trigger or "available_now").strip()
    key = value.lower().replace("-", "_").replace(" ", "_")
    if key in ("available_now", "availablenow"):
        return {"availableNow": True}
    if key == "once":
        return {"once": True}
    interval = re.sub(r"^(processing_?time|processingtime)\s*[:=]?\s*", "", value, flags=re.I).strip()
    if _INTERVAL.match(interval):
        return {"processingTime": interval}
    raise ModelRunError(f"model {model}: unknown advanced.spark.trigger {trigger!r}; use available_now (the "
                        "default), once, an interval like '30 seconds' (the pace of `streamt run "
                        "--continuous`) or real_time (Spark's Real-time Mode in `streamt run --continuous`)",
                        model)
