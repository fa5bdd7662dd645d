"""``partitioned_by`` as Dagster partitions: one partitions definition per distinct partitioning, and
the partitions a run covers (one key, or a range for a single-run backfill) as a PartitionScope."""

from __future__ import annotations

from datetime import datetime

import dagster as dg

from ..spark.run.partitions import TIME_KEYS, PartitionScope, signature
from ..spec.models import Model, PartitionedBy

PARTITION_CLASSES: dict[str, type[dg.TimeWindowPartitionsDefinition]] = {
    "hour": dg.HourlyPartitionsDefinition,
    "day": dg.DailyPartitionsDefinition,
    "week": dg.WeeklyPartitionsDefinition,
    "month": dg.MonthlyPartitionsDefinition,
}


_DEFS: dict[str, dg.PartitionsDefinition] = {}


def partitions_def(pb: PartitionedBy) -> dg.PartitionsDefinition:
    """One definition object per signature: models partitioned the same way share it."""
    sig = signature(pb)
    if sig not in _DEFS:
        _DEFS[sig] = _build(pb)
    return _DEFS[sig]


def _build(pb: PartitionedBy) -> dg.PartitionsDefinition:
    if pb.values is not None:
        return dg.StaticPartitionsDefinition(list(pb.values))
    gran = pb.granularity or "day"
    kwargs: dict[str, object] = {
        "start_date": datetime.fromisoformat(str(pb.start)),
        "end_date": datetime.fromisoformat(str(pb.end)) if pb.end else None,
        "timezone": pb.timezone, "fmt": TIME_KEYS[gran][0],
    }
    if gran == "week":
        kwargs["day_offset"] = 1  # Monday, like Spark's date_trunc('WEEK')
    return PARTITION_CLASSES[gran](**kwargs)  # type: ignore[arg-type]


def group_key(model: Model) -> tuple[str, str] | None:
    """Models that can run in one partitioned run: same partitions and the same backfill policy."""
    pb = model.partitioned_by
    return None if pb is None else (signature(pb), pb.backfill)


def backfill_policy(pb: PartitionedBy) -> dg.BackfillPolicy:
    return dg.BackfillPolicy.single_run() if pb.backfill == "single_run" else dg.BackfillPolicy.multi_run(1)


def scope_of(context: dg.AssetExecutionContext, pb: PartitionedBy) -> PartitionScope | None:
    """The partitions this run writes: every key of its range (a single-run backfill) in order; None
    for a run without partitions (each partitioned model then fails, saying how to run it)."""
    if not (context.has_partition_key or context.has_partition_key_range):
        return None
    keys = tuple(context.partition_keys)
    if pb.values is not None:
        return PartitionScope(keys, signature(pb))
    window = context.partition_time_window
    return PartitionScope(keys, signature(pb), window.start, window.end)


def keys_between(pdef: dg.PartitionsDefinition, first: str, last: str) -> list[str]:
    """Partition keys from ``first`` to ``last`` (inclusive). Dates or timestamps are accepted for
    time partitions: every partition that starts within [first, last]."""
    keys = list(pdef.get_partition_keys())
    if isinstance(pdef, dg.TimeWindowPartitionsDefinition):
        if first in keys and last in keys:
            return keys[keys.index(first):keys.index(last) + 1]
        lo, hi = _moment(first, pdef.timezone), _moment(last, pdef.timezone)
        return [k for k in keys if lo <= pdef.time_window_for_partition_key(k).start <= hi]
    missing = [k for k in (first, last) if k not in keys]
    if missing:
        raise ValueError(f"unknown partition {missing[0]!r}; the partitions are: {', '.join(keys)}")
    i, j = keys.index(first), keys.index(last)
    return keys[min(i, j):max(i, j) + 1]


def _moment(text: str, tz: str) -> datetime:
    from zoneinfo import ZoneInfo

    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a partition key or a date (write it like 2026-01-01 or "
                         "2026-01-01T06:00)") from None
    return value if value.tzinfo else value.replace(tzinfo=ZoneInfo(tz))
