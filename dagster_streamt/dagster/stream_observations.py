"""Continuous-mode progress as Dagster asset observations on each stream model's asset.

Continuous queries run outside any Dagster run, so their progress is recorded as runless
observations: the asset page then shows rows, rates, watermark and lag over time. Only reports that
saw new micro-batches are recorded (plus start, failure and stop), so an idle stream does not fill
the event log with a row every few seconds.
"""

from __future__ import annotations

from collections.abc import Callable
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


class ObservationReporter:
    """``on_progress`` / ``on_event`` callbacks for :class:`~dagster_streamt.spark.streams.continuous.ContinuousRunner`
    that record observations on ``instance`` under the keys ``key_of(model)`` returns."""

    def __init__(self, instance: dg.DagsterInstance, key_of: Callable[[str], dg.AssetKey]) -> None:
        self.instance = instance
        self.key_of = key_of

    def _record(self, model: str, metadata: dict[str, Any]) -> None:
        self.instance.report_runless_asset_event(dg.AssetObservation(asset_key=self.key_of(model), metadata=metadata))

    def progress(self, p: ModelProgress) -> None:
        if p.new_batches:
            self._record(p.model, progress_metadata(p))

    def event(self, e: StreamEvent) -> None:
        self._record(e.model, event_metadata(e))


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
