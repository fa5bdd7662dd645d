"""Partitions of a table model as Spark sees them: which partition a row belongs to, the partitions a
run writes, and the SQL values ``{{ partition_start }}`` / ``{{ partition_end }}`` /
``{{ partition_key }}`` / ``{{ partition_keys }}`` take.

Stored as Hive-style folders ``<model>/data/streamt_partition=<key>/`` so that a run replaces exactly
its partitions (dynamic partition overwrite) and readers of one window prune the rest.
Keys are the Dagster partition keys (``2026-01-05``, ``2026-01-05-13`` for hours, or a static value).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ...spec.models import PartitionedBy
from ...sql.identifiers import quote

if TYPE_CHECKING:
    from pyspark.sql import Column

KEY_COLUMN = "streamt_partition"
# granularity -> (Python key format shared with the Dagster partitions definition, Spark pattern, date_trunc unit)
TIME_KEYS: dict[str, tuple[str, str, str]] = {
    "hour": ("%Y-%m-%d-%H", "yyyy-MM-dd-HH", "HOUR"),
    "day": ("%Y-%m-%d", "yyyy-MM-dd", "DAY"),
    "week": ("%Y-%m-%d", "yyyy-MM-dd", "WEEK"),  # weeks start on Monday, like Spark's date_trunc
    "month": ("%Y-%m-%d", "yyyy-MM-dd", "MONTH"),
}


def signature(pb: PartitionedBy) -> str:
    """What makes two models 'partitioned the same way' (their keys mean the same rows); the
    column and backfill policy may differ."""
    return json.dumps({"granularity": pb.granularity, "start": pb.start, "end": pb.end, "timezone": pb.timezone,
                       "values": pb.values}, sort_keys=True)


def describe(pb: PartitionedBy) -> str:
    if pb.values is not None:
        return f"static partitions on {pb.column}: {', '.join(pb.values)}"
    every = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly"}[pb.granularity or "day"]
    return f"{every} partitions on {pb.column} from {pb.start} ({pb.timezone})"


def key_expr(pb: PartitionedBy) -> Column:
    """The partition key of each row. Time keys are computed in the session time zone, which a
    partitioned model's session sets to ``partitioned_by.timezone`` (see RunContext.for_model).
    pyspark is imported here, not above: the Dagster definitions import this module, and a run that
    decides from Python that nothing is new must not pay for importing Spark."""
    from pyspark.sql import functions as F

    column = F.col(quote(str(pb.column)))
    if pb.values is not None:
        return column.cast("string")
    _, pattern, unit = TIME_KEYS[pb.granularity or "day"]
    return F.date_format(F.date_trunc(unit, column.cast("timestamp")), pattern)


def timestamp_literal(moment: datetime) -> str:
    """A Spark SQL timestamp literal for an aware datetime, exact in any session time zone."""
    offset = moment.strftime("%z")
    return f"TIMESTAMP '{moment:%Y-%m-%d %H:%M:%S}{offset[:3]}:{offset[3:]}'"


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class PartitionScope:
    """The partitions one run writes: ``keys`` (ordered) of models partitioned as ``signature``;
    ``start``/``end`` is the time window they cover (None for static partitions)."""

    keys: tuple[str, ...]
    signature: str
    start: datetime | None = None
    end: datetime | None = None

    def variables(self) -> dict[str, str]:
        out = {"partition_key": _sql_string(self.keys[0]) if len(self.keys) == 1 else "NULL",
               "partition_keys": "(" + ", ".join(_sql_string(k) for k in self.keys) + ")"}
        if self.start is not None and self.end is not None:
            out["partition_start"] = timestamp_literal(self.start)
            out["partition_end"] = timestamp_literal(self.end)
        return out

    def label(self) -> str:
        return self.keys[0] if len(self.keys) == 1 else f"{self.keys[0]}..{self.keys[-1]} ({len(self.keys)})"
