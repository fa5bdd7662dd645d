"""A continuous run's progress and state changes as Dagster metadata on each stream model's asset: the
asset page then shows rows, rates, watermark and lag over time (see :mod:`.continuous_run`, which records
only the looks that saw new micro-batches, so an idle stream does not fill the event log).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import dagster as dg

from ..core import metadata as meta

if TYPE_CHECKING:
    from ..spark.streams.continuous import StreamEvent
    from ..spark.streams.stream_stats import ModelProgress

MODE = {meta.MODE: meta.CONTINUOUS}


def progress_metadata(p: ModelProgress) -> dict[str, Any]:
    md: dict[str, Any] = {**MODE, meta.STATUS: "running" if p.running else "stopped",
                          "trigger": p.trigger, "batches": p.batches, "new_batches": p.new_batches,
                          "rows_written": p.rows_written, "new_rows": p.new_rows, "input_rows": p.input_rows,
                          "restarts": p.restarts}
    if p.batch_id is not None:
        md["batch_id"] = p.batch_id
    md.update({name: round(float(value), 3) for name in ("input_rows_per_second", "processed_rows_per_second",
                                                          "lag_s", "latency_s")
               if (value := getattr(p, name)) is not None})
    if p.watermark:
        md["last_watermark"] = p.watermark
    if p.kafka_offsets:
        md["kafka_offsets"] = dg.MetadataValue.json(p.kafka_offsets)
    if p.offsets_behind is not None:
        md["kafka_offsets_behind"] = p.offsets_behind
    if p.lag_by_source:
        md["kafka_lag"] = dg.MetadataValue.json(p.lag_by_source)
    return md


def event_metadata(e: StreamEvent) -> dict[str, Any]:
    """A state change (started, failed, gave up, skipped, stopped) as observation metadata."""
    md: dict[str, Any] = progress_metadata(e.totals) if e.totals is not None else {**MODE}
    # a failure that will be retried is "restarting": `streamt status` shows "failed" only for a stream
    # that gave up or could not start
    status = {"started": "running", "gave_up": "failed"}.get(e.kind, e.kind)
    md[meta.STATUS] = "restarting" if e.kind == "failed" and e.delay_s is not None else status
    if e.message:
        md["error" if e.kind in ("failed", "gave_up", "skipped") else "message"] = e.message
    if e.delay_s is not None:
        md["restart_in_s"] = round(e.delay_s, 3)
    return md
