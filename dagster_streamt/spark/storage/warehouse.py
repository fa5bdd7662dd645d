"""The project's own table layout (no Hive metastore, so many processes can share it).

Layout under ``runtime.spark.warehouse``::

    <model>/data/                a Delta table (:mod:`.delta_table`), written by a table model's refreshes
                                 or a stream model's micro-batches
    <model>/_streamt_state/      an aggregation's state, a Delta table too, unless the model's rows are it
                                 (:mod:`.table_state`)
    <source>__quarantine/data/   malformed records of a source, appended

What a table is (its schema, rows, version, what it was built from) is its Delta log's to say, nowhere
else (:mod:`..delta.delta_table`); a view is no storage at all: readers render it from the project.
"""

from __future__ import annotations

from pathlib import Path

from ...core.object_stores import store_kind
from ...spec.project import Project
from ..errors import ModelRunError
from .locks import FileLock
from .object_lock import ObjectLock, lock_at
from .paths import ProjectPaths
from .store import Loc, ObjectPath, remove_tree


class Warehouse:
    """``root``: a local folder or an object store prefix; ``locks``: where the writer locks of an object
    store's models are (a local folder: default ``<root>/../locks``; local warehouses keep theirs in the
    model's folder)."""

    def __init__(self, root: Loc, locks: Path | None = None) -> None:
        self.root = root
        self.locks = locks

    @classmethod
    def for_project(cls, project: Project) -> Warehouse:
        paths = ProjectPaths.from_project(project)
        return cls(paths.warehouse, paths.locks)

    @property
    def remote(self) -> bool:
        """Whether the tables are on an object store."""
        return isinstance(self.root, ObjectPath)

    # -- layout ------------------------------------------------------------------------------
    def model_dir(self, name: str) -> Loc:
        return self.root / name

    def data_dir(self, name: str) -> Loc:
        """Where a stream model's file sink writes."""
        return self.model_dir(name) / "data"

    def quarantine_dir(self, source: str) -> Loc:
        return self.root / f"{source}__quarantine" / "data"

    def table_location(self, name: str) -> Loc | None:
        """The folder a reader should read now: the model's Delta table (or a view's nothing)."""
        data = self.data_dir(name)
        return data if data.is_dir() else None

    # -- batch tables --------------------------------------------------------------------------
    def lock(self, name: str) -> FileLock | ObjectLock:
        """The model's writer lock: one writer plans and commits a new version at a time. On S3 it is an
        object in the bucket (``_locks/<model>``), which drivers on other machines see too; elsewhere a
        file (Delta's log stores for Google Cloud Storage and Azure make a concurrent commit fail)."""
        if isinstance(self.root, ObjectPath) and store_kind(self.root.uri) == "s3":
            return lock_at(self.root / "_locks" / name, wait=True, model=name)
        if isinstance(self.root, ObjectPath):
            if self.locks is None:
                raise ModelRunError(f"model {name}: no local folder for the locks of {self.root}", name)
            return FileLock(self.locks / f"{name}.lock", wait=True, model=name)
        model_dir = self.root / name
        model_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(model_dir / ".lock", wait=True, model=name)

    def remove(self, name: str) -> None:
        """Forget a model: every stored version or stream output."""
        remove_tree(self.model_dir(name))
