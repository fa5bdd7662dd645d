"""``full_refresh``: forget a model's streaming progress and output so the next run starts over."""

from __future__ import annotations

import shutil

from ...spec.project import Project
from .locks import FileLock
from .paths import ProjectPaths
from .warehouse import Warehouse


def reset_model(paths: ProjectPaths, name: str) -> None:
    """Delete checkpoint and stored output. The caller holds the checkpoint lock.
    Continuous tests' side-query checkpoints go too (they point into the deleted output); the
    recorded violations are history and stay."""
    shutil.rmtree(paths.checkpoint(name), ignore_errors=True)
    shutil.rmtree(paths.checkpoint(f"{name}__violations"), ignore_errors=True)
    Warehouse(paths.warehouse, paths.locks).remove(name)


def full_refresh(project: Project, model: str) -> None:
    """Reset ``model`` (stream, table, view or sink) so its next run reprocesses all input.

    A streaming sink's file export or JDBC table starts over with its first new micro-batch (published
    atomically, so readers never see it empty); a Kafka topic is left alone. A snapshot sink replaces
    its export on every run anyway.
    """
    reset_locked(ProjectPaths.from_project(project), model)


def reset_locked(paths: ProjectPaths, name: str) -> None:
    """``reset_model`` under the checkpoint lock: never pull state from under a running query."""
    busy = f"cannot reset model {name} while it is running"
    with FileLock(paths.checkpoint_lock(name), busy_message=busy, model=name):
        reset_model(paths, name)
