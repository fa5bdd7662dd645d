"""Where a project keeps its Spark state. Every path is absolute and derived from the project root
(never the current directory), so two processes started from anywhere agree on the layout. The
warehouse and the stream checkpoints may be on an object store (:mod:`.store`); locks are local files,
or objects beside S3 checkpoints (:mod:`.object_lock`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...core.object_stores import store_kind
from ...spec.project import Project
from .store import Loc, ObjectPath, location

STATE_DIR = ".streamt"
# Characters Spark escapes in partition folder names (ExternalCatalogUtils.escapePathName).
_UNSAFE = re.compile(r"[\x00-\x1f\"#%'*/:=?\\\x7f{\[\]^]")

REAL_TIME_SUFFIX = "__realtime"  # the checkpoint of a model in Real-time Mode: <model>__realtime


def logged_batches(folder: Loc) -> set[int]:
    """Batch ids of a checkpoint's log folder (``offsets`` or ``commits``: files ``0``, ``1``...; not
    ``.0.crc`` or temporary files), on a local disk or an object store; empty when there is none.

    >>> logged_batches(Path("/nonexistent/commits"))
    set()
    """
    try:
        return {int(p.name) for p in folder.iterdir() if p.name.isdigit()}  # Spark writes no folders there
    except OSError:
        return set()


def partition_folder(column: str, value: str) -> str:
    """``column=value`` as Spark names a Hive-style partition folder (and unescapes when reading)."""
    if not value:
        raise ValueError("partition values must not be empty")
    return f"{column}={_UNSAFE.sub(lambda m: f'%{ord(m.group()):02X}', value)}"


@dataclass(frozen=True)
class ProjectPaths:
    root: Path
    warehouse: Loc
    checkpoints: Loc

    @classmethod
    def from_project(cls, project: Project) -> ProjectPaths:
        spark = project.runtime.spark
        return cls(
            root=project.root.resolve(),
            warehouse=location(spark.warehouse, project.resolve_path, spark.conf),
            checkpoints=location(spark.checkpoints, project.resolve_path, spark.conf),
        )

    @property
    def locks(self) -> Path:
        """Writer locks of tables and checkpoints on Google Cloud Storage or Azure (S3 keeps its own in the bucket)."""
        return self.state_dir / "locks"

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    def checkpoint(self, name: str) -> Loc:
        """A stream model's (or streaming sink's) checkpoint folder."""
        return self.checkpoints / name

    def checkpoint_lock(self, name: str) -> Loc:
        """Lock of a checkpoint: one writer per checkpoint at a time (:func:`.object_lock.lock_at` takes it).
        Next to the checkpoint: a file, or on S3 an object under ``_locks/`` (drivers on two machines share
        the bucket, not a disk); on Google Cloud Storage and Azure, a file in the local lock folder."""
        if isinstance(self.checkpoints, ObjectPath):
            if store_kind(self.checkpoints.uri) == "s3":
                return self.checkpoints / "_locks" / name
            return self.locks / "checkpoints" / f"{name}.lock"
        return self.checkpoints / f"{name}.lock"
