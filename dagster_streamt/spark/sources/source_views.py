"""Registering a declared source as a run's view: a stream, a batch read pinned to the run's
snapshot of its files, or the appended files of an incremental refresh. The source's quarantine
query (:mod:`.quarantine`) runs once per run, in the background for batch reads: a model reads the
source while it runs, and waits for its count only when it reports (:meth:`.InputStats.resolved`).
Each query is exactly once on its own (its checkpoint), so which of the two commits first does not
matter: a run killed between them leaves the other to the next run."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from ...spec.models import FILE_FORMATS
from ...spec.topics import topic_folder
from ..delta.input_files import listing_digest
from ..run.context import RunContext
from .inputs import Input, InputStats, counted_stream, watermarked
from .quarantine import quarantine_source, quarantined_total, run_quarantine
from .snapshots import source_snapshot
from .sources import PERMISSIVE, SourceRead, read_source, valid_rows


def register_source(ctx: RunContext, inp: Input) -> InputStats:
    """A stream reports the corrupt records its source's quarantine query found in this run; a batch
    read reports every corrupt record quarantined for the source so far (its files' malformed records)."""
    source = ctx.project.sources[inp.name]
    if inp.mode == "stream":
        read = read_source(ctx.spark, ctx.project, source, streaming=True)

        def quarantine() -> int:
            if not read.permissive:
                return 0
            return run_quarantine(ctx.spark, ctx.paths, ctx.warehouse, read, ctx.run_id)

        bad = _started(ctx, source.name, quarantine).result()
        fmt = source.resolved_format
        files = fmt in FILE_FORMATS or (fmt == "kafka" and topic_folder(ctx.project, source.topic or "") is not None)
        watermarked(counted_stream(valid_rows(read), inp, files), inp).createOrReplaceTempView(inp.view)
        return InputStats(None, bad)

    read = _batch_read(ctx, inp.name)
    later = _quarantine_started(ctx, read)
    if inp.files:  # an incremental refresh: the appended files only
        scan = read_source(ctx.spark, ctx.project, source, streaming=False, files=inp.files)
        return observed_view(ctx, valid_rows(scan), inp, later)
    valid = valid_rows(read)

    def count() -> int:
        return ctx.per_run.get(("source-rows", source.name), valid.count)

    if inp.capture:  # the model's action reads the source whole: its rows are counted as they go by
        return observed_view(ctx, valid, inp, later, count)
    valid.createOrReplaceTempView(inp.view)
    return InputStats(count()) + later


def valid_batch_rows(ctx: RunContext, name: str) -> DataFrame:
    """The source's rows that parse, read in batch, without quarantining the others: the next read that
    does (a model's) finds them new, and counts them in its result."""
    return valid_rows(_batch_read(ctx, name))


def _batch_read(ctx: RunContext, name: str) -> SourceRead:
    """The source read in batch, pinned to the run's snapshot of its files (see input_files)."""
    source = ctx.project.sources[name]
    snapshot = source_snapshot(ctx, source)
    return read_source(ctx.spark, ctx.project, source, streaming=False,
                       files=snapshot.paths() if snapshot is not None else None)


def _started(ctx: RunContext, name: str, query: Callable[[], int]) -> Future[int]:
    """The source's quarantine query, started once per run in the background (whichever read asks
    first starts it; a stream read waits for it, a batch read does not)."""
    def timed() -> int:
        began = time.monotonic()
        try:
            return query()
        finally:
            ctx.timings[name] = time.monotonic() - began

    return ctx.per_run.get(("quarantine", name), lambda: ctx.background.submit(timed))


def _quarantine_started(ctx: RunContext, read: SourceRead) -> InputStats:
    """Start the source's quarantine query; stats whose quarantined count (the rows its quarantine
    table holds once it has ended) is known later."""
    if not read.permissive:
        return InputStats()
    name = read.source.name
    source = ctx.project.sources[name]
    query = _started(ctx, name, lambda: quarantine_source(
        ctx.spark, ctx.project, ctx.paths, ctx.warehouse, source, read, ctx.run_id,
        listing_digest(source_snapshot(ctx, source))))

    def total() -> int:
        query.result()
        return ctx.per_run.get(("quarantined", name), lambda: quarantined_total(ctx.spark, ctx.warehouse, name))

    return InputStats(later=(total,))


def source_quarantined(ctx: RunContext, name: str) -> int:
    """Malformed records of a batch source quarantined so far (new files quarantined first), as a
    table reading it reports them, without registering a view."""
    if ctx.project.sources[name].resolved_format not in PERMISSIVE:
        return 0
    return _quarantine_started(ctx, _batch_read(ctx, name)).resolved().quarantined  # its query runs once a run


def observed_view(ctx: RunContext, df: DataFrame, inp: Input, stats: InputStats,
                  fallback: Callable[[], int] | None = None) -> InputStats:
    """Register ``df`` as ``inp``'s view, its rows counted by the action that reads it; when that
    action did not read it all (a join Spark cut short), ``fallback`` counts them (default: unknown)."""
    name = f"streamt_{inp.view}_{uuid.uuid4().hex[:8]}"
    obs = Observation(name)
    ctx.observed.register(ctx.spark, inp.view, df.observe(obs, F.count(F.lit(1)).alias("rows")))

    def rows() -> InputStats:
        seen = ctx.observed.metrics(obs, name).get("rows")
        if seen is None and fallback is not None:
            seen = fallback()
        return InputStats(int(seen) if seen is not None else None)  # no count back: unknown, not 0

    return stats + InputStats(pending=(rows,))
