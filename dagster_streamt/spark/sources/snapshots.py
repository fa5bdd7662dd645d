"""Snapshots of a run's inputs (:mod:`.input_files`): a source's files once per run, so every model
of the run reads the same files; a stored table's files whenever asked (a model upstream in the same
run may just have written a new version)."""

from __future__ import annotations

from ...spec.models import Source
from ..delta.delta_table import DELTA
from ..delta.delta_table import snapshot as delta_snapshot
from ..delta.input_files import Snapshot, listed_by_python, listed_by_spark, source_location
from ..run.context import RunContext
from ..storage.warehouse import RegistryEntry
from .sources import read_source


def source_snapshot(ctx: RunContext, source: Source) -> Snapshot | None:
    """The files of a local file source (or local topic folder) now; None for other sources."""
    return ctx.per_run.get(("snapshot", source.name), lambda: _source_snapshot(ctx, source))


def _source_snapshot(ctx: RunContext, source: Source) -> Snapshot | None:
    location = source_location(ctx.project, source)
    if location is None or not location.exists():
        return None
    files = listed_by_python(location, source.options)
    if files is None:
        files = listed_by_spark(read_source(ctx.spark, ctx.project, source, streaming=False).df.inputFiles())
    return Snapshot(location, files, relative=False) if files is not None else None


def model_snapshot(ctx: RunContext, entry: RegistryEntry) -> Snapshot | None:
    """The data files of a stored model's Delta table now, with its version number (once per run:
    readers of it in this run read that version); None for views and partitioned tables."""
    # once per run and model: the refresh decision and the reader see the same version even when a
    # concurrent run swaps in another meanwhile (an input model of this run has finished before anyone
    # reading it asks)
    return ctx.per_run.get(("model-snapshot", entry.name, entry.layout), lambda: _model_snapshot(ctx, entry))


def _model_snapshot(ctx: RunContext, entry: RegistryEntry) -> Snapshot | None:
    if entry.format == DELTA and entry.layout in ("delta", "stream"):  # its current version's files
        return delta_snapshot(ctx.warehouse.data_dir(entry.name))
    return None
