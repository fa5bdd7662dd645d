"""Which models have a Delta table, for ``status --history``, ``restore`` and ``vacuum``: a model name
turned into its table folder, or one clear error (did you mean, not stored as Delta, not written yet)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..spark.storage.store import ObjectPath
from ..spec.suggest import did_you_mean
from .common import fail

DELTA_KINDS = ("table", "stream")


def kind_of(model: Any) -> str:
    return model.materialized or "table"


def stores_delta(model: Any) -> bool:
    return kind_of(model) in DELTA_KINDS and model.advanced.spark.format == "delta"


def delta_table_or_exit(loaded: Any, name: str, *, restore: bool = False) -> Path | ObjectPath:
    """The folder of model ``name``'s Delta table; exits 2 for an unknown model, 1 for one without a
    Delta table (``restore``: also for a stream or partitioned table, which a RESTORE would desync)."""
    from ..spark.storage.paths import ProjectPaths

    models = loaded.project.models
    if name not in models:
        hint = did_you_mean(name, models)
        raise click.UsageError(f"unknown model {name!r}" + (f"; {hint}" if hint else "") +
                               " (`streamt lineage` lists the models)")
    model = models[name]
    kind = kind_of(model)
    if kind not in DELTA_KINDS:
        fail(f"model {name} is a {kind}: it stores no table of its own, so it has no Delta versions")
    if model.advanced.spark.format != "delta":
        fail(f"model {name} is stored as {model.advanced.spark.format} (advanced.spark.format), not as a Delta "
             "table: it has no versions (remove the key to store it as Delta, the default)")
    # Warehouse.data_dir's layout, without the pyspark import warehouse.py costs (a quarter second of --history)
    table = ProjectPaths.from_project(loaded.project).warehouse / name / "data"
    if not (table / "_delta_log").is_dir():
        fail(f"model {name} has no Delta table at {table} yet: `streamt run -s {name}` writes it")
    if restore and kind == "stream":
        fail(f"model {name} is a stream: its checkpoint records the micro-batches its table holds, so a RESTORE "
             f"would lose the later ones for good; `streamt run --full-refresh {name}` rebuilds it from its input")
    if restore and model.partitioned_by is not None:
        fail(f"model {name} is partitioned: restore is not supported for partitioned tables yet; "
             f"`streamt backfill {name} --from ... --to ...` rewrites partitions")
    return table


@contextmanager
def jvm_console_on_stderr() -> Iterator[None]:
    """Inside: file descriptor 1 is stderr, so an embedded JVM started here prints its console lines there
    (Delta's VACUUM prints one per table): stdout keeps only our output, ``--format json`` stays parseable."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
