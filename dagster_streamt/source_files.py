"""The data files of a file source as Spark reads them, with size and modification time.

The new-data sensor and source freshness both need this on every tick, without starting a JVM: a local
folder with ``os.scandir``, an object store (``s3a://``...) with pyarrow's listing.
Files and folders Spark ignores are skipped the same way (``_SUCCESS``, ``.part.crc``,
``_spark_metadata``, ``x._COPYING_``), so bookkeeping files never count as new data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .core.object_stores import is_object_uri
from .spark.storage.store import Loc, ObjectPath, StoreOptions
from .spec.models import FILE_FORMATS, Source
from .spec.project import Project


@dataclass(frozen=True, order=True)
class DataFile:
    path: str  # relative to the source path, "/"-separated ("x.json" when the source path is one file)
    size: int
    mtime_ns: int


def is_file_source(source: Source) -> bool:
    return source.resolved_format in FILE_FORMATS and bool(source.path)


def source_location(project: Project, source: Source) -> Loc:
    """The source's path, resolved against the project folder (like the Spark reader does), or its object
    store location, reached with the project's ``fs.*`` settings as Spark reaches it."""
    assert source.path is not None
    if is_object_uri(source.path):
        return ObjectPath(source.path, StoreOptions.from_spark_conf(project.runtime.spark.conf))
    return project.resolve_path(source.path)


def is_hidden(name: str) -> bool:
    """Spark's rule for names it skips when listing input files (partition folders like ``_k=v`` are kept)."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name) or name.endswith("._COPYING_")


def data_files(location: Loc) -> list[DataFile]:
    """Every data file under ``location`` (recursive), sorted by path; ``[]`` when it does not exist.
    Files deleted while listing are skipped; other listing errors (permissions) propagate as OSError."""
    if isinstance(location, ObjectPath):
        return sorted(DataFile(rel, size, mtime) for rel, (size, mtime) in location.stat_files(is_hidden).items())
    if location.is_file():
        st = location.stat()
        return [DataFile(location.name, st.st_size, st.st_mtime_ns)]
    if not location.is_dir():
        return []
    out: list[DataFile] = []
    stack = [(location, "")]
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if is_hidden(entry.name):
                    continue
                rel = f"{prefix}{entry.name}"
                try:
                    if entry.is_dir():
                        stack.append((Path(entry.path), f"{rel}/"))
                    elif entry.is_file():
                        st = entry.stat()
                        out.append(DataFile(rel, st.st_size, st.st_mtime_ns))
                except FileNotFoundError:
                    continue
    return sorted(out)
