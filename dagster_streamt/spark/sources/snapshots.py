"""What a run's inputs are now, once per run: a source's files (:mod:`.input_files`), so every model of
the run reads the same files; a stored model's current Delta version, so every reader of it in the run
reads that version, whatever a concurrent run commits meanwhile."""

from __future__ import annotations

from ...spec.models import Source
from ..delta.delta_table import Commit, current_commit
from ..delta.input_files import Snapshot, listed_by_spark, python_snapshot, source_location
from ..run.context import RunContext
from .sources import read_source


def source_snapshot(ctx: RunContext, source: Source) -> Snapshot | None:
    """The files of a local file source (or local topic folder) now; None for other sources."""
    return ctx.per_run.get(("snapshot", source.name), lambda: _source_snapshot(ctx, source))


def _source_snapshot(ctx: RunContext, source: Source) -> Snapshot | None:
    listed = python_snapshot(ctx.project, source)
    location = source_location(ctx.project, source)
    if listed is not None or location is None or not location.exists():
        return listed
    files = listed_by_spark(read_source(ctx.spark, ctx.project, source, streaming=False).df.inputFiles())
    return Snapshot(location, files, relative=False) if files is not None else None


def model_version(ctx: RunContext, name: str) -> Commit | None:
    """The current version of a stored model's Delta table, read once per run and model (asked once the
    model, if upstream in this run, has finished); None for views, partitioned tables and models never run."""
    if ctx.project.models[name].partitioned_by is not None:
        return None  # replaced partition by partition: read whole, never followed by version
    return ctx.per_run.get(("model-version", name), lambda: current_commit(ctx.warehouse.data_dir(name)))
