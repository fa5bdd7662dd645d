"""Where a batch source's row and corrupt counts (and its quarantine rows) come from in a run.

Cheapest first: the ledger when no file is new (no parse at all); the consuming model's own scan when
every file is new and the model reads the source whole (:mod:`.quarantine_capture`: one parse for
both); otherwise a pass of its own over the new files (:func:`.quarantine.quarantine_batch`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..spec.models import FILE_FORMATS
from .context import RunContext
from .quarantine import quarantine_batch
from .quarantine_capture import Capture, write_captured
from .quarantine_ledger import LEDGER_FILE, Fingerprint, Ledger, Pass, local_files
from .snapshots import source_snapshot
from .sources import SourceRead, read_source

Counts = tuple[int, int]  # (records read, corrupt records)


def _local_files(ctx: RunContext, read: SourceRead) -> dict[str, Fingerprint] | None:
    if read.source.resolved_format not in FILE_FORMATS:
        return None
    snapshot = source_snapshot(ctx, read.source)  # the files the run's reads of the source are pinned to
    return dict(snapshot.files) if snapshot is not None else local_files(read.df.inputFiles())


def _ledger(ctx: RunContext, read: SourceRead) -> Ledger:
    return Ledger(ctx.warehouse.quarantine_dir(read.source.name) / LEDGER_FILE)


def quarantine_new_files(ctx: RunContext, read: SourceRead) -> Counts:
    """Counts of the whole source, parsing only the files no earlier pass has read (local file
    sources; others are read whole every run)."""
    current = _local_files(ctx, read)
    if current is None:
        return quarantine_batch(ctx.spark, ctx.warehouse, read, ctx.run_id)
    ledger = _ledger(ctx, read)
    passes, new = ledger.plan(current)
    if new:
        subset = read if len(new) == len(current) else \
            read_source(ctx.spark, ctx.project, read.source, streaming=False, files=new)
        rows, bad = quarantine_batch(ctx.spark, ctx.warehouse, subset, ctx.run_id)
        passes = [*passes, Pass({f: current[f] for f in new}, rows, bad)]
        ledger.save(passes)
    return sum(p.rows for p in passes), sum(p.bad for p in passes)


def capture_scan(ctx: RunContext, read: SourceRead, name: str,
                 scan: SourceRead | None = None) -> tuple[Capture, Callable[[], Counts]] | None:
    """A capture for a model whose action reads ``scan`` whole (default: the whole source ``read``),
    with what to call once that action has run; it returns the source's total counts. None unless
    ``scan`` covers exactly the files no earlier pass has read (a fresh source, or the files an
    incremental refresh reads): the separate pass then costs little or nothing (see
    :func:`quarantine_new_files`)."""
    current = _local_files(ctx, read)
    passes: list[Pass] = []
    if current is not None:
        passes, new = _ledger(ctx, read).plan(current)
        if scan is None and (passes or not new):
            return None
        if scan is not None and set(new) != set(_local_files_of(scan)):
            return None
    elif scan is not None:
        return None
    capture = Capture(scan or read, name)

    def settle() -> Counts:
        captured = capture.result()
        if captured is None:  # the scan cannot vouch for its files: a pass of its own
            return quarantine_new_files(ctx, read)
        write_captured(ctx.warehouse, read.source.name, captured, ctx.run_id)
        if current is not None:  # after the rows, as in quarantine_new_files
            files = current if scan is None else {f: current[f] for f in _local_files_of(scan)}
            done = [*passes, Pass(files, captured.rows, captured.bad)]
            _ledger(ctx, read).save(done)
            return sum(p.rows for p in done), sum(p.bad for p in done)
        return captured.rows, captured.bad

    return capture, settle


def _local_files_of(scan: SourceRead) -> list[str]:
    """The files a pinned read of a subset was given (see :func:`.sources.read_source`)."""
    return list(scan.files)
