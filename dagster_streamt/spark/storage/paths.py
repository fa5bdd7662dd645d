"""Where a project keeps its Spark state. Every path is absolute and derived from the project root
(never the current directory), so two processes started from anywhere agree on the layout. The
warehouse may be on an object store (:mod:`.store`); checkpoints and locks are local (or mounted)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...core.object_stores import is_object_uri
from ...spec.project import Project
from .store import Loc, location

STATE_DIR = ".streamt"
# Characters Spark escapes in partition folder names (ExternalCatalogUtils.escapePathName).
_UNSAFE = re.compile(r"[\x00-\x1f\"#%'*/:=?\\\x7f{\[\]^]")

REAL_TIME_SUFFIX = "__realtime"  # the checkpoint of a model in Real-time Mode: <model>__realtime


def partition_folder(column: str, value: str) -> str:
    """``column=value`` as Spark names a Hive-style partition folder (and unescapes when reading)."""
    if not value:
        raise ValueError("partition values must not be empty")
    return f"{column}={_UNSAFE.sub(lambda m: f'%{ord(m.group()):02X}', value)}"


@dataclass(frozen=True)
class ProjectPaths:
    root: Path
    warehouse: Loc
    checkpoints: Path

    @classmethod
    def from_project(cls, project: Project) -> ProjectPaths:
        spark = project.runtime.spark
        if is_object_uri(spark.checkpoints):  # streamt validate says so first (STR091)
            raise ValueError(f"runtime.spark.checkpoints {spark.checkpoints!r}: checkpoints must be a local or "
                             "mounted folder, not an object store")
        return cls(
            root=project.root.resolve(),
            warehouse=location(spark.warehouse, project.resolve_path, spark.conf),
            checkpoints=project.resolve_path(spark.checkpoints).resolve(),
        )

    @property
    def locks(self) -> Path:
        """Writer locks of models whose tables are on an object store (a lock needs a local file)."""
        return self.state_dir / "locks"

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    def checkpoint(self, name: str) -> Path:
        """A stream model's (or streaming sink's) checkpoint folder."""
        return self.checkpoints / name

    def checkpoint_lock(self, name: str) -> Path:
        """Lock file next to the checkpoint: one writer per checkpoint at a time."""
        return self.checkpoints / f"{name}.lock"
