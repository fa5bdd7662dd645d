"""What a model's ``ref()``/``source()`` calls become in a run: the inputs it reads, how each is read
(batch or stream, which files), and what reading them cost; shared by the rendering and the
registration of views (:mod:`.relations`, :mod:`.source_views`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...sql.identifiers import quote
from ..delta.delta_table import Appended
from ..errors import ModelRunError
from ..run.progress import IN_PREFIX

Mode = Literal["batch", "stream"]
DEFAULT_DELAY = "5 seconds"  # streamt's default watermark: 5000 ms of out-of-orderness


@dataclass(frozen=True)
class Input:
    kind: str  # "source" | "model"
    name: str
    mode: Mode  # how this input is read (a stream model reads a table input in batch)
    view: str  # temporary view name the SQL reads
    watermark: tuple[str, str] | None = None  # (event-time column, delay) for stream inputs
    own_watermark: bool = True  # False: borrowed from the consuming model's event_time
    keys: tuple[str, ...] | None = None  # read only these partitions (an upstream partitioned the same way)
    fallback: tuple[str, ...] = ()  # window time columns: watermarked (default delay) when no event_time says
    capture: bool = False  # a batch source the model's action reads whole: its scan counts the rows
    files: tuple[str, ...] = ()  # a source: read only these files, the part appended since the model last read it
    appended: Appended | None = None  # a stored model: read only the rows its log appended since then


@dataclass(frozen=True)
class Rendered:
    model: str
    sql: str
    inputs: tuple[Input, ...]

    @property
    def shown(self) -> str:
        """The SQL as users read it (the UI's ``executed_sql``): each input under its project name, not
        the run's temporary view, with one comment line per input saying how this run read it.

        >>> r = Rendered("clean", "SELECT * FROM `orders_raw__files` JOIN `customers` USING (id)",
        ...              (Input("source", "orders_raw", "batch", "orders_raw__files", files=("a.json",)),
        ...               Input("source", "customers", "batch", "customers")))
        >>> print(r.shown)
        -- orders_raw (source): read 1 new file only
        -- customers (source): read whole
        SELECT * FROM `orders_raw` JOIN `customers` USING (id)
        """
        names = {quote(i.view): quote(i.name) for i in self.inputs}
        pattern = "|".join(re.escape(v) for v in sorted(names, key=len, reverse=True))  # one pass: no chains
        sql = re.sub(pattern, lambda m: names[m.group(0)], self.sql) if names else self.sql
        notes = []
        for i in self.inputs:
            how = "read as a stream: the rows new since its checkpoint" if i.mode == "stream" else "read whole"
            if i.files:
                how = f"read {len(i.files)} new file{'s' if len(i.files) > 1 else ''} only"
            elif i.appended is not None:
                how = f"read the rows appended after version {i.appended.after}"
            elif i.keys is not None:
                how = f"read partition{'s' if len(i.keys) > 1 else ''} " + (
                    ", ".join(i.keys) if len(i.keys) <= 3 else f"{i.keys[0]} .. {i.keys[-1]} ({len(i.keys)})")
            notes.append(f"-- {i.name} ({i.kind}): {how}")
        return "\n".join([*notes, sql])


@dataclass(frozen=True)
class InputStats:
    rows: int | None = None  # rows read from storage (None: unknown, e.g. streams)
    quarantined: int = 0  # see :meth:`resolved`: quarantine counts may still be on their way
    pending: tuple[Callable[[], InputStats], ...] = ()  # known once the model's action has run
    later: tuple[Callable[[], int], ...] = ()  # quarantined counts known once a source's quarantine query ends

    def __add__(self, other: InputStats) -> InputStats:
        rows = None if self.rows is None and other.rows is None else (self.rows or 0) + (other.rows or 0)
        return InputStats(rows, self.quarantined + other.quarantined, self.pending + other.pending,
                          self.later + other.later)

    def resolved(self) -> InputStats:
        """With the quarantine counts waited for (pending row counts left pending): call as late as
        possible, so the model's own work overlaps its sources' quarantine queries."""
        return InputStats(self.rows, self.quarantined + sum(part() for part in self.later), self.pending)

    def settle(self) -> InputStats:
        """The totals, pending parts included; call after the action that reads the inputs."""
        resolved = self.resolved()
        total = InputStats(resolved.rows, resolved.quarantined)
        for part in resolved.pending:
            total = total + part().resolved()
        return total


def as_timestamp(df: DataFrame, column: str) -> DataFrame:
    """An event-time column read without a type (JSON strings, epoch milliseconds) as a timestamp."""
    kind = dict(df.dtypes).get(column, "")
    if kind.startswith("timestamp"):
        return df
    value = F.col(quote(column))
    integral = kind in ("bigint", "int", "smallint")
    converted = F.timestamp_millis(value.cast("long")) if integral else F.to_timestamp(value)
    return df.withColumn(column, converted)


def watermarked(df: DataFrame, inp: Input) -> DataFrame:
    if inp.watermark is None:
        column = next((c for c in inp.fallback if c in df.columns), None)
        return df if column is None else as_timestamp(df, column).withWatermark(column, DEFAULT_DELAY)
    column, delay = inp.watermark
    if column not in df.columns:
        if not inp.own_watermark:
            return df  # the consumer's event_time column belongs to another input
        raise ModelRunError(f"{inp.kind} {inp.name}: event_time column {column!r} is not one of its columns "
                            f"({', '.join(df.columns)}); fix `event_time.column`")
    return as_timestamp(df, column).withWatermark(column, delay)


def counted_stream(df: DataFrame, inp: Input, files: bool = True) -> DataFrame:
    """Count the rows a stream input delivers per micro-batch (see progress.input_rows) and, for file
    inputs, when the newest of them arrived (its file's modification time: max_lag without a column)."""
    metrics = [F.count(F.lit(1)).alias("rows")]
    if files:
        metrics.append(F.max(F.unix_micros(F.col("_metadata.file_modification_time"))).alias("arrival"))
    return df.observe(f"{IN_PREFIX}{inp.view}", *metrics)
