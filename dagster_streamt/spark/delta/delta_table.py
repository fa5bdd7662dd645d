"""Tables stored as Delta Lake: the default format of ``table`` models and stream outputs.

A table lives in ``<warehouse>/<model>/data/`` (``_delta_log/`` beside its Parquet files). Every refresh
is one Delta commit (an overwrite, or an append of the rows of new input files), so a reader sees the
previous version or the new one, and any engine that reads Delta reads the table.

What the refresh planner needs to know about the current version (the input files it was built from and
a hash of its SQL and settings: :class:`.refresh_record.RefreshRecord`) travels in that same commit as
its ``userMetadata``: the record and the rows can never disagree, and no file of ours sits beside the log.
The log is read here with delta-rs (the ``deltalake`` package): no Spark job to plan a refresh.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from deltalake.exceptions import DeltaError
from pyspark.sql import DataFrame

from ..storage.store import Loc, ObjectPath, delta_rs_args
from .input_files import Fingerprint, Snapshot, fingerprint
from .refresh_record import RefreshRecord, record_from_json, record_json

log = logging.getLogger(__name__)

DELTA = "delta"
LOG = "_delta_log"
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"  # a commit's metadata when no writer option can


def _log_names(path: Loc) -> list[str]:
    try:
        return [p.name for p in (path / LOG).iterdir()]
    except OSError:
        return []


def is_delta_table(path: Loc) -> bool:
    """Whether ``path`` holds a Delta table (a log with at least one commit)."""
    return any(n.endswith((".json", ".parquet")) for n in _log_names(path))


def current_version(path: Loc) -> int | None:
    """The table's latest version: the highest commit file of its log (no log read); None if no table."""
    numbers = [int(n[:-5]) for n in _log_names(path) if n.endswith(".json") and n[:-5].isdigit()]
    return max(numbers) if numbers else None


@dataclass(frozen=True)
class Commit:
    """The current version of a Delta table as this package wrote it."""

    version: int
    files: dict[str, Any]  # active data files, relative to the table's folder -> their size in bytes
    rows: int | None  # rows of the whole table (from the files' statistics), None when unknown
    record: RefreshRecord | None  # what the version was built from, when the commit carries it


def _table(path: Loc) -> Any:
    from deltalake import DeltaTable

    uri, options = delta_rs_args(path)
    return DeltaTable(uri, storage_options=options)


def current_commit(path: Loc) -> Commit | None:
    """The table's current version, or None when there is no readable table at ``path``."""
    if not is_delta_table(path):
        return None
    try:
        table = _table(path)
        version = int(table.version())
        actions = table.get_add_actions(flatten=True)
        columns = {name: actions.column(name).to_pylist() for name in actions.schema.names}
        paths, sizes = columns.get("path", []), columns.get("size_bytes", [])
        counts = columns.get("num_records")
        rows = sum(int(n) for n in counts) if counts is not None and None not in counts else None
        history = table.history(1)
    except (DeltaError, OSError) as exc:  # a protocol delta-rs does not read, a log mid-write: a full rebuild
        log.warning("the Delta table at %s cannot be read without Spark (%s): its model is rebuilt", path, exc)
        return None
    meta = history[0].get("userMetadata") if history and int(history[0].get("version", version)) == version else None
    record = record_from_json(meta, len(paths)) if isinstance(meta, str) else None
    return Commit(version, dict(zip(paths, sizes, strict=True)), rows, record)


def file_modification_times(path: Loc) -> dict[str, int]:
    """When each active data file was written (epoch ms, as the log records it), by path relative to the
    table: what a Delta stream's micro-batch row came from, since Delta's stream has no ``_metadata``."""
    try:
        actions = _table(path).get_add_actions(flatten=True)
    except (DeltaError, OSError):  # no readable table (vacuumed, mid-write): the caller falls back to its own clock
        return {}
    paths, times = actions.column("path").to_pylist(), actions.column("modification_time").to_pylist()
    return {str(p): int(t) for p, t in zip(paths, times, strict=True) if t is not None}


def snapshot(path: Loc) -> Snapshot | None:
    """The table's current files with their fingerprints (Delta never rewrites a data file: an append
    only adds files, anything else removes them), pinned to its version for readers. On an object
    store a file's fingerprint is its size from the log: Delta names every data file anew."""
    commit = current_commit(path)
    if commit is None:
        return None
    if isinstance(path, ObjectPath):
        return Snapshot(path, {rel: _logged(size) for rel, size in commit.files.items()}, relative=True,
                        version=commit.version)
    try:
        files = {rel: fingerprint(os.stat(path / rel)) for rel in commit.files}
    except OSError:  # a file of the log is gone (vacuumed under a reader): no increment
        return None
    return Snapshot(path, files, relative=True, version=commit.version)


def _logged(size: Any) -> Fingerprint:
    return int(size or 0), 0, 0, 0


def write(df: DataFrame, path: Loc, mode: str, record: RefreshRecord | None,
          partition_by: list[str] | None = None) -> None:
    """``df`` as one commit to the table at ``path``: ``overwrite`` (its schema replaces the old one) or
    ``append``; ``record`` goes in the same commit."""
    writer = df.write.format(DELTA).mode(mode)
    if mode == "overwrite":
        writer = writer.option("overwriteSchema", "true")
    if record is not None:
        writer = writer.option("userMetadata", record_json(record))
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(str(path))

