"""Each stream model's health from what its continuous runs reported to the Dagster instance: no Spark, no
broker (``streamt observe``).

A continuous run reports each look that saw committed micro-batches (a materialization of the model in
the ``<project>_continuous`` job, a runless observation from ``streamt run --continuous``) and each state
change (an observation). The latest of those says where the stream is; the Dagster run it belongs to says
whether it is still running (a run killed without a word leaves "running" as its last report).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import dagster as dg

from ..api import LoadedProject
from ..core import metadata as meta
from ..core.durations import parse_duration
from .key_map import KeyMap
from .run_history import md_value

STALL_TRIGGERS = 10  # a running stream with records waiting and no batch for this many triggers is stalled
_ACTIVE = {dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.QUEUED,
           dg.DagsterRunStatus.NOT_STARTED}


@dataclass(frozen=True)
class StreamHealth:
    """One stream model as its last continuous report left it; ``health`` sums it up:
    ``ok``, ``lagging`` (batches take longer than the trigger), ``stalled`` (records wait, no batch for
    ``STALL_TRIGGERS`` triggers), ``restarting``, ``failed``, ``stopped`` or ``never run``."""

    model: str
    health: str
    state: str
    run_id: str | None = None
    trigger: str | None = None
    last_batch_id: int | None = None
    last_batch_at: float | None = None  # epoch seconds
    batches: int | None = None
    rows_written: int | None = None
    input_rows_per_second: float | None = None
    processed_rows_per_second: float | None = None
    batch_duration_s: float | None = None
    keeping_up: bool | None = None
    watermark: str | None = None
    watermark_lag_s: float | None = None
    kafka_offsets_behind: int | None = None
    kafka_lag: dict[str, int] | None = None  # records not read yet per Kafka source (its topics)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def keeping_up(trigger: str | None, batch_s: float | None) -> bool | None:
    """Whether a micro-batch fits its trigger interval (None when either is unknown).

    >>> keeping_up("5 seconds", 1.2), keeping_up("5 seconds", 7.0), keeping_up("real-time", 1.0)
    (True, False, None)
    """
    seconds = trigger_seconds(trigger)
    return None if seconds is None or batch_s is None else batch_s <= seconds


def trigger_seconds(trigger: str | None) -> float | None:
    try:
        return float(parse_duration(trigger)) if trigger else None
    except (TypeError, ValueError):
        return None


def _latest(instance: dg.DagsterInstance, key: dg.AssetKey) -> tuple[Any, dict[str, Any], Any] | None:
    """(entry, metadata, last batch entry) of the model's latest continuous report."""
    found = []
    for records in (instance.fetch_materializations(key, limit=5).records, instance.fetch_observations(key, limit=5)
                    .records):
        for rec in records:
            entry = rec.event_log_entry
            event = entry.asset_materialization or entry.asset_observation
            md = dict(event.metadata) if event is not None else {}
            if md_value(md, meta.MODE) == meta.CONTINUOUS:
                found.append((entry.timestamp, entry, md))
    if not found:
        return None
    found.sort(key=lambda f: f[0])
    batches = [f for f in found if md_value(f[2], "new_batches")]
    return found[-1][1], found[-1][2], (batches[-1] if batches else None)


def stream_health(loaded: LoadedProject, instance: dg.DagsterInstance, keys: KeyMap,
                  now: float | None = None) -> list[StreamHealth]:
    """Every stream model of the code location, sorted by name."""
    now = time.time() if now is None else now
    out = []
    for name in sorted(n for n, m in loaded.project.models.items() if m.materialized == "stream"):
        key = keys.models.get(name)
        found = _latest(instance, key) if key is not None else None
        if found is None:
            out.append(StreamHealth(name, "never run", "never run"))
            continue
        entry, md, batch = found
        state = str(md_value(md, meta.STATUS, "running"))
        run_id = entry.run_id or md_value(md, meta.RUN_ID)  # a run's last reports are runless once interrupted
        run = instance.get_run_by_id(run_id) if run_id else None
        if state in ("running", "restarting") and run is not None and run.status not in _ACTIVE:
            state = "stopped"  # its run ended without a last report (killed)
        bmd = batch[2] if batch is not None else md
        trigger = md_value(md, "trigger")
        duration = md_value(bmd, "batch_duration_s", md_value(bmd, "latency_s"))
        fits = keeping_up(trigger, duration)
        behind = md_value(md, "kafka_offsets_behind")
        since = now - batch[0] if batch is not None else None
        every = trigger_seconds(trigger)
        wm_lag = md_value(bmd, "lag_s")
        health = {"failed": "failed", "restarting": "restarting", "stopped": "stopped"}.get(state, "ok")
        if health == "ok" and behind and since is not None and every and since > STALL_TRIGGERS * every:
            health = "stalled"
        elif health == "ok" and fits is False:
            health = "lagging"
        out.append(StreamHealth(
            model=name, health=health, state=state, run_id=run_id or None, trigger=trigger,
            last_batch_id=md_value(bmd, "batch_id"), last_batch_at=batch[0] if batch is not None else None,
            batches=md_value(md, "batches"), rows_written=md_value(md, "rows_written"),
            input_rows_per_second=md_value(bmd, "input_rows_per_second"),
            processed_rows_per_second=md_value(bmd, "processed_rows_per_second"), batch_duration_s=duration,
            keeping_up=fits, watermark=md_value(bmd, "last_watermark"),
            watermark_lag_s=None if wm_lag is None or since is None else round(float(wm_lag) + since, 1),
            kafka_offsets_behind=behind, kafka_lag=md_value(md, "kafka_lag"), error=md_value(md, "error")))
    return out
