"""The quarantine pass folded into a model's own scan of a batch source.

A table model reading a JSON or CSV source parses every record anyway. Observing that scan yields
the source's row count, its corrupt count and its corrupt records, so finding the malformed records
needs no second parse of the source (the cost that made a run slower than a hand-written job).

The records ride back to the driver with the job's metrics, so they are bounded: at most ``LIMIT``
records of at most ``PREFIX`` characters. Whenever the observation cannot be trusted, :meth:`result`
says so and the caller runs the separate pass instead (:func:`.quarantine.quarantine_batch`):

* the action did not read the whole source (a join Spark cut short because its other side was
  empty; the observation then comes back empty);
* more corrupt records than ``LIMIT``, or one longer than ``PREFIX``;
* a task that ran twice (a stage retried on a cluster) counted its rows twice: every record carries
  its row id (partition and position, the same when a task reruns), and counts that disagree with
  the distinct records fall back.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from ..core.files import atomic_writer
from .locks import FileLock
from .observed_views import observed_metrics
from .quarantine import reason
from .sources import CORRUPT, LOCATOR, SourceRead, is_corrupt
from .warehouse import Warehouse

LIMIT = 10_000  # corrupt records carried back with the job's metrics; more: the separate pass
PREFIX = 8_192  # characters of one record carried back; a longer one: the separate pass
ROW_ID = "_streamt_row_id"


@dataclass(frozen=True)
class Captured:
    rows: int  # records read, corrupt ones included
    bad: int
    records: tuple[tuple[str, str, str], ...]  # (raw record, source file, reason), sorted


class Capture:
    """One observed scan of one source, for one model's action."""

    def __init__(self, read: SourceRead, name: str) -> None:
        self.read = read
        self.name = name
        self._obs = Observation(name)
        self._result: tuple[Captured | None] | None = None

    def valid_rows(self) -> DataFrame:
        """The source's valid rows; an action that reads them all fills this capture."""
        read = self.read
        corrupt = is_corrupt()
        record = F.struct(F.substring(F.col(CORRUPT), 1, PREFIX).alias("raw"), F.col(LOCATOR).alias("file"),
                          reason(read.source, read.data_columns).alias("reason"), F.col(ROW_ID).alias("id"))
        observed = read.df.withColumn(ROW_ID, F.monotonically_increasing_id()).observe(
            self._obs,
            F.count(F.lit(1)).alias("rows"),
            F.count(F.when(corrupt, 1)).alias("bad"),
            F.max(F.length(F.col(CORRUPT))).alias("longest"),
            F.max_by(record, F.when(corrupt, F.lit(0)), LIMIT).alias("records"),
        )
        # every data column is already in the scan (the reason reads them all): no hash guard needed
        return observed.where(~corrupt).drop(ROW_ID, CORRUPT, LOCATOR)

    def result(self) -> Captured | None:
        """What the scan saw, or None when the separate pass must run (see the module docstring)."""
        if self._result is None:
            self._result = (self._read_result(),)
        return self._result[0]

    def _read_result(self) -> Captured | None:
        metrics = observed_metrics(self._obs, self.name)
        if not metrics:
            return None
        rows, bad = int(metrics.get("rows") or 0), int(metrics.get("bad") or 0)
        if bad > LIMIT or int(metrics.get("longest") or 0) > PREFIX:
            return None
        distinct = {r["id"]: r for r in metrics.get("records") or ()}
        if len(distinct) != bad:
            return None
        records = sorted((r["raw"], r["file"], r["reason"]) for r in distinct.values())
        return Captured(rows, bad, tuple(records))


def _quarantine_schema() -> Any:
    import pyarrow as pa

    text = pa.string()
    return pa.schema([("source", text), ("raw_record", text), ("reason", text), ("source_file", text),
                      ("loaded_at", pa.timestamp("us", tz="UTC")), ("run_id", text)])  # = QUARANTINE_SCHEMA


def write_captured(warehouse: Warehouse, source: str, captured: Captured, run_id: str) -> None:
    """Append the captured records to the source's quarantine as one Parquet file, written by this
    process (no Spark job for a few rows); records of files quarantined before are skipped, as
    :func:`.quarantine.append_new` does. The file appears whole or not at all."""
    if not captured.records:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = warehouse.quarantine_dir(source)
    target.mkdir(parents=True, exist_ok=True)
    with FileLock(target.parent / ".lock", wait=True):
        seen: set[str] = set()
        if next(target.glob("*.parquet"), None) is not None:
            seen = set(pq.read_table(target, columns=["source_file"]).column("source_file").to_pylist())
        records = [r for r in captured.records if r[1] not in seen]
        if not records:
            return
        n = len(records)
        now = datetime.now(UTC)
        table = pa.table({"source": [source] * n, "raw_record": [r[0] for r in records],
                          "reason": [r[2] for r in records], "source_file": [r[1] for r in records],
                          "loaded_at": [now] * n, "run_id": [run_id] * n}, schema=_quarantine_schema())
        with atomic_writer(target / f"part-{uuid.uuid4().hex}-streamt.parquet", "wb") as fh:
            pq.write_table(table, fh)
