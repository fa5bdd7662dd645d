"""Undo and upkeep of a model's Delta table: ``streamt restore`` and ``streamt vacuum``.

Both run Delta's own commands through Spark under the model's writer lock, so no run of ours plans or
commits against the table meanwhile. A restore carries the restored version's refresh record into the
RESTORE commit, so the next run refreshes from that version's inputs instead of rebuilding.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from ...sql.identifiers import delta_path as _quoted
from ..errors import ModelRunError
from ..storage.object_lock import lock_at
from ..storage.paths import ProjectPaths
from ..storage.store import Loc, ObjectPath
from ..storage.warehouse import Warehouse
from .delta_history import commits, data_files, table_rows
from .delta_table import USER_METADATA
from .input_files import hidden

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
DELTA_MIN_RETENTION_HOURS = 168.0  # below this Delta refuses VACUUM unless its check is off


@dataclass(frozen=True)
class Restored:
    model: str
    restored: int  # the version whose rows the table holds again
    version: int  # the RESTORE commit's version, now current
    rows: int


@dataclass(frozen=True)
class Vacuumed:
    model: str
    files: int  # data files deleted (or that would be, in a dry run)
    bytes: int


@contextmanager
def _conf(spark: SparkSession, key: str, value: str | None) -> Iterator[None]:
    """``key`` set to ``value`` (None: left as it is) for the block, then back to what it was."""
    if value is None:
        yield
        return
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def restorable(table: Loc) -> tuple[int, int, dict[int, dict]]:
    """(oldest, current) versions the log still holds and their commit infos by version."""
    infos = {int(h["version"]): h for h in commits(table)}
    return min(infos), max(infos), infos


def version_at(table: Loc, when: datetime) -> int:
    """The version current at ``when`` (the last commit at or before it), as Delta's time travel resolves it."""
    oldest, _, infos = restorable(table)
    before = [v for v, h in infos.items() if int(h["timestamp"]) <= when.timestamp() * 1000]
    if not before:
        first = datetime.fromtimestamp(int(infos[oldest]["timestamp"]) / 1000).astimezone()
        raise ModelRunError(f"{when.isoformat()} is before the oldest version the log still holds "
                            f"(version {oldest}, committed {first.isoformat(timespec='seconds')})")
    return max(before)


def check_target(model: str, table: Loc, target: int) -> None:
    """Refuse a version the log no longer holds, the current one, or one whose files VACUUM deleted."""
    oldest, current, _ = restorable(table)
    if target == current:
        raise ModelRunError(f"model {model}: version {target} is already the current version of {table}")
    if oldest == current:
        raise ModelRunError(f"model {model}: {table} holds only its current version {current}: there is no "
                            "earlier version to restore")
    if not oldest <= target < current:
        raise ModelRunError(f"model {model}: version {target} is out of range: {table} can be restored to "
                            f"versions {oldest}..{current - 1} (current: {current}; "
                            f"`streamt status --history {model}` lists them)")
    missing = [f for f in data_files(table, target) if not (table / f).exists()]
    if missing:
        raise ModelRunError(f"model {model}: {len(missing)} data file(s) of version {target} were deleted by "
                            f"VACUUM (e.g. {missing[0]}), so it can no longer be restored; "
                            f"`streamt status --history {model}` lists the versions")


def restore(spark: SparkSession, warehouse: Warehouse, model: str, target: int) -> Restored:
    """Make ``target`` the table's current version again (one RESTORE commit), under the writer lock."""
    table = warehouse.data_dir(model)
    with warehouse.lock(model):
        check_target(model, table, target)  # again under the lock: a run may have committed meanwhile
        meta = restorable(table)[2][target].get("userMetadata")
        with _conf(spark, USER_METADATA, meta if isinstance(meta, str) else None):
            DeltaTable.forPath(spark, str(table)).restoreToVersion(int(target))
        version = max(restorable(table)[2])
        rows = table_rows(table, version)
        if rows is None:  # a file without statistics: count the restored version
            rows = spark.read.format("delta").load(str(table)).count()
    return Restored(model, target, version, rows)


def _data_files(table: Loc) -> dict[str, int]:
    """Every data file under the table's folder (the log and ``_``/``.`` files aside) with its size."""
    if isinstance(table, ObjectPath):
        return table.files(skip=hidden)
    out = {}
    for folder, dirs, files in os.walk(table):
        dirs[:] = [d for d in dirs if not hidden(d)]
        for name in files:
            if not hidden(name):
                path = Path(folder) / name
                out[str(path.relative_to(table))] = path.stat().st_size
    return out


def _relative(listed: str, table: Loc) -> str:
    """A path VACUUM lists, relative to the table (local paths come back as ``file:`` URIs)."""
    if isinstance(table, ObjectPath):
        return listed.removeprefix(str(table) + "/")
    return str(Path(listed.removeprefix("file:")).relative_to(table))


def vacuum(spark: SparkSession, warehouse: Warehouse, paths: ProjectPaths, model: str, hours: float,
           dry_run: bool = False, stream: bool = False) -> Vacuumed:
    """Delta's VACUUM of the model's table keeping ``hours`` of history, under the writer lock (a stream:
    also its checkpoint lock, refused while it runs: its next micro-batch's files are not committed yet)."""
    table = warehouse.data_dir(model)
    busy = f"cannot vacuum model {model} while its stream is running"
    with warehouse.lock(model), (lock_at(paths.checkpoint_lock(model), busy_message=busy, model=model)
                                 if stream else nullcontext()):
        before = _data_files(table)
        check = "false" if hours < DELTA_MIN_RETENTION_HOURS else None
        with _conf(spark, RETENTION_CHECK, check):
            if dry_run:
                # (delta-spark's DeltaTable has no dry run: Delta's SQL has)
                listed = spark.sql(f"VACUUM {_quoted(table)} RETAIN {hours:g} HOURS DRY RUN").collect()
                gone = {_relative(str(r[0]), table) for r in listed}
                gone &= set(before)
            else:
                DeltaTable.forPath(spark, str(table)).vacuum(hours)
                gone = set(before) - set(_data_files(table))
    return Vacuumed(model, len(gone), sum(before[f] for f in gone))
