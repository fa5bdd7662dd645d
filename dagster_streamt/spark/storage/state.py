"""Detect a moved or copied project before it silently loses data.

Streaming checkpoints and file-sink logs store absolute paths. A project copied elsewhere and rerun
reads the old locations (or skips files it believes done) without any error, so we record the
project root in ``.streamt/state.json`` and stop when it changed while streaming state exists.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...core.files import atomic_write
from ..errors import ModelRunError
from .paths import ProjectPaths
from .reset import reset_locked
from .store import remove_tree

QUARANTINE_SUFFIX = "__quarantine"


class ProjectMovedError(ModelRunError):
    """The project folder is not where its streaming state was created."""


def recorded_root(paths: ProjectPaths) -> str | None:
    try:
        return str(json.loads(paths.state_file.read_text(encoding="utf-8"))["project_root"])
    except (FileNotFoundError, KeyError, ValueError):
        return None


def _write_root(paths: ProjectPaths) -> None:
    atomic_write(paths.state_file, json.dumps({"project_root": str(paths.root)}, indent=2) + "\n")


def streaming_state(paths: ProjectPaths) -> set[str]:
    """Names owning absolute-path state: checkpoint folders and file-sink outputs."""
    names: set[str] = set()
    if paths.checkpoints.is_dir():
        names |= {p.name for p in paths.checkpoints.iterdir()  # `_locks`: a bucket's writer locks
                  if p.is_dir() and not p.name.startswith("_") and any(p.iterdir())}
    if isinstance(paths.warehouse, Path) and paths.warehouse.is_dir():  # (plain file-sink outputs: never remote)
        names |= {p.parent.parent.name for p in paths.warehouse.glob("*/data/_spark_metadata")}
    return names


def check_project_root(paths: ProjectPaths, full_refresh: set[str] | frozenset[str] = frozenset()) -> None:
    """Raise :class:`ProjectMovedError` unless every model with streaming state is being refreshed.

    When the move is covered by ``full_refresh``, the stale state is deleted here and the new root
    recorded, so the refreshed models start clean.
    """
    old = recorded_root(paths)
    if old == str(paths.root):
        return
    state = streaming_state(paths) if old is not None else set()
    stale = sorted(n for n in state if not n.endswith(QUARANTINE_SUFFIX) and n not in full_refresh)
    if stale:
        raise ProjectMovedError(
            f"this project was moved or copied from {old} to {paths.root}; the streaming state of "
            f"{', '.join(stale)} records absolute paths under the old folder, and continuing would silently "
            "skip or lose data. Run `streamt run --full-refresh` to rebuild the stream models here "
            f"(or `streamt run --full-refresh {stale[0]}` per model), or move the project back to {old}")
    for name in sorted(state):
        if name.endswith(QUARANTINE_SUFFIX):  # its table goes too: the query reads every file again
            remove_tree(paths.checkpoint(name))
            remove_tree(paths.warehouse / name)
        else:
            reset_locked(paths, name)
    _write_root(paths)

