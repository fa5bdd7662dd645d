"""Registering a declared source as a run's view: a stream, a batch read pinned to the run's
snapshot of its files, the appended files of an incremental refresh, or the parsed rows a small
source keeps (:mod:`.parsed_cache`); malformed records are quarantined once per file."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from ..spec.models import FILE_FORMATS
from ..spec.topics import topic_folder
from .context import RunContext
from .inputs import Input, InputStats, counted_stream, watermarked
from .observed_views import observed_metrics
from .parsed_cache import ParsedCache
from .quarantine import quarantine_stream
from .snapshots import source_snapshot
from .source_quarantine import capture_scan, quarantine_new_files
from .sources import PERMISSIVE, SourceRead, read_source, valid_rows


def register_source(ctx: RunContext, inp: Input) -> InputStats:
    source = ctx.project.sources[inp.name]
    if inp.mode == "stream":
        read = read_source(ctx.spark, ctx.project, source, streaming=True)

        def quarantine() -> int:
            if not read.permissive:
                return 0
            return quarantine_stream(ctx.spark, ctx.paths, ctx.warehouse, read, ctx.run_id)

        bad = ctx.per_run.get(("quarantine-stream", source.name), quarantine)
        fmt = source.resolved_format
        files = fmt in FILE_FORMATS or (fmt == "kafka" and topic_folder(ctx.project, source.topic or "") is not None)
        watermarked(counted_stream(valid_rows(read), inp, files), inp).createOrReplaceTempView(inp.view)
        return InputStats(None, bad)

    key = ("source-batch", source.name)
    snapshot = source_snapshot(ctx, source)  # read exactly the files it lists (see input_files)
    read = read_source(ctx.spark, ctx.project, source, streaming=False,
                       files=snapshot.paths() if snapshot is not None else None)

    def count() -> InputStats:
        if read.permissive:
            rows, bad = quarantine_new_files(ctx, read)
            return InputStats(rows - bad, bad)
        return InputStats(read.df.count())

    cache = ParsedCache.of(ctx, source, snapshot) if read.permissive else None
    if cache is not None:
        cached = _register_parsed(ctx, inp, read, cache, count)
        if cached is not None:
            return cached
    scan = read_source(ctx.spark, ctx.project, source, streaming=False, files=inp.files) if inp.files else None
    planned = capture_scan(ctx, read, f"streamt_{inp.view}_{ctx.run_id}", scan) \
        if (inp.capture or scan is not None) and read.permissive else None
    if planned is None:
        stats = ctx.per_run.get(key, count)
        if scan is not None:  # an incremental refresh: the appended files only
            return observed_view(ctx, valid_rows(scan), inp, InputStats(quarantined=stats.quarantined))
        valid_rows(read).createOrReplaceTempView(inp.view)
        return stats
    capture, settle = planned

    def settled() -> InputStats:
        def compute() -> InputStats:
            rows, bad = settle()
            return InputStats(rows - bad, bad)

        total = ctx.per_run.get(key, compute)  # another model may have settled this source meanwhile
        if scan is None:
            return total
        seen = capture.result()  # the appended files' rows: what this refresh read
        return InputStats(seen.rows - seen.bad if seen is not None else None, total.quarantined)

    ctx.observed.register(ctx.spark, inp.view, capture.valid_rows())
    return InputStats(pending=(settled,))


def _register_parsed(ctx: RunContext, inp: Input, read: SourceRead, cache: ParsedCache,
                     count: Callable[[], InputStats]) -> InputStats | None:
    """``inp``'s view over the source's parsed rows (:mod:`.parsed_cache`), parsing the files no batch
    holds yet (their malformed records quarantined in the same pass); None when the cached batches
    cannot give exactly the files asked for."""
    key = ("source-batch", read.source.name)
    files = list(inp.files) if inp.files else cache.snapshot.paths()
    with cache.lock():  # one parse of a file, whatever reads it at the same time
        covered = cache.cover(files)
        if covered is None:
            return None
        batches, missing = covered
        if missing:
            scan = read_source(ctx.spark, ctx.project, read.source, streaming=False, files=missing)
            planned = capture_scan(ctx, read, f"streamt_{inp.view}_{ctx.run_id}", scan)
            if planned is None:  # the quarantine has seen these files: only their valid rows are wanted
                batches.append(cache.add(valid_rows(scan), missing))
            else:
                capture, settle = planned
                batches.append(cache.add(capture.valid_rows(), missing))
                rows, bad = settle()
                ctx.per_run.get(key, lambda: InputStats(rows - bad, bad))
    cache.read(ctx, batches, read.data_columns).createOrReplaceTempView(inp.view)
    total = ctx.per_run.get(key, count)
    if inp.files:  # an incremental refresh: what it read are the appended files' rows
        return InputStats(sum(b.rows for b in batches), total.quarantined)
    return total


def source_quarantined(ctx: RunContext, name: str) -> int:
    """Malformed records of a batch source's current files (the ledger's totals; only files it has
    not seen are parsed), as a table reading it reports them, without registering a view."""
    source = ctx.project.sources[name]
    if source.resolved_format not in PERMISSIVE:
        return 0
    snapshot = source_snapshot(ctx, source)
    read = read_source(ctx.spark, ctx.project, source, streaming=False,
                       files=snapshot.paths() if snapshot is not None else None)
    if not read.permissive:
        return 0

    def count() -> InputStats:
        rows, bad = quarantine_new_files(ctx, read)
        return InputStats(rows - bad, bad)

    return ctx.per_run.get(("source-batch", name), count).quarantined


def observed_view(ctx: RunContext, df: DataFrame, inp: Input, stats: InputStats) -> InputStats:
    """Register ``df`` as ``inp``'s view, its rows counted by the action that reads it."""
    name = f"streamt_{inp.view}_{uuid.uuid4().hex[:8]}"
    obs = Observation(name)
    ctx.observed.register(ctx.spark, inp.view, df.observe(obs, F.count(F.lit(1)).alias("rows")))

    def rows() -> InputStats:
        seen = observed_metrics(obs, name).get("rows")
        return InputStats(int(seen) if seen is not None else None)  # no count back: unknown, not 0

    return stats + InputStats(pending=(rows,))
