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
from .sources import SourceRead, read_source

Counts = tuple[int, int]  # (records read, corrupt records)


def _local_files(read: SourceRead) -> dict[str, Fingerprint] | None:
    return local_files(read.df.inputFiles()) if read.source.resolved_format in FILE_FORMATS else None


def _ledger(ctx: RunContext, read: SourceRead) -> Ledger:
    return Ledger(ctx.warehouse.quarantine_dir(read.source.name) / LEDGER_FILE)


def quarantine_new_files(ctx: RunContext, read: SourceRead) -> Counts:
    """Counts of the whole source, parsing only the files no earlier pass has read (local file
    sources; others are read whole every run)."""
    current = _local_files(read)
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


def capture_scan(ctx: RunContext, read: SourceRead, name: str) -> tuple[Capture, Callable[[], Counts]] | None:
    """A capture for a model that reads ``read`` whole, with what to call once the model's action has
    run; None when no file is new to the ledger's passes (the separate pass then costs little or
    nothing: see :func:`quarantine_new_files`)."""
    current = _local_files(read)
    if current is not None:
        passes, new = _ledger(ctx, read).plan(current)
        if passes or not new:
            return None
    capture = Capture(read, name)

    def settle() -> Counts:
        captured = capture.result()
        if captured is None:  # the scan cannot vouch for the whole source: a pass of its own
            return quarantine_new_files(ctx, read)
        write_captured(ctx.warehouse, read.source.name, captured, ctx.run_id)
        if current is not None:  # after the rows, as in quarantine_new_files
            _ledger(ctx, read).save([Pass(current, captured.rows, captured.bad)])
        return captured.rows, captured.bad

    return capture, settle
