"""``full_refresh``: forget a model's streaming progress and output so the next run starts over."""

from __future__ import annotations

import shutil
from pathlib import Path

from ...spec.models import Model
from ...spec.project import Project
from ...spec.topics import model_topic, topic_folder
from .object_lock import lock_at
from .paths import ProjectPaths
from .store import remove_tree
from .warehouse import Warehouse


def publication(name: str) -> str:
    """The checkpoint (and lock) name of the query that publishes model ``name``'s output to its topic."""
    return f"{name}__topic"


def local_topic(project: Project, model: Model) -> Path | None:
    """The folder of the model's topic when topics are local folders (``runtime.kafka.local_dir``)."""
    topic = model_topic(project, model)
    return topic_folder(project, topic) if topic is not None else None


def reset_model(paths: ProjectPaths, name: str, topic_dir: Path | None = None) -> None:
    """Delete checkpoint and stored output. The caller holds the checkpoint lock.
    Continuous tests' side-query checkpoints go too (they point into the deleted output); the
    recorded violations are history and stay. So does the checkpoint of the query publishing the model's
    topic (it points into the deleted table: Delta refuses to follow a replaced table), and a local
    topic's folder (``topic_dir``: ours, like the table, so the topic holds the new output once); a Kafka
    topic keeps what it had, and gets the new output after it."""
    remove_tree(paths.checkpoint(name))
    remove_tree(paths.checkpoint(f"{name}__violations"))
    remove_tree(paths.checkpoint(publication(name)))
    if topic_dir is not None:
        shutil.rmtree(topic_dir, ignore_errors=True)
    Warehouse(paths.warehouse, paths.locks).remove(name)


def full_refresh(project: Project, model: str) -> None:
    """Reset ``model`` (stream, table, view or sink) so its next run reprocesses all input.

    A streaming sink's file export or JDBC table starts over with its first new micro-batch (published
    atomically, so readers never see it empty); a local topic folder starts over, a Kafka topic is left
    alone (the new output is published after what it holds). A snapshot sink replaces
    its export on every run anyway.
    """
    topic_dir = local_topic(project, project.models[model]) if model in project.models else None
    reset_locked(ProjectPaths.from_project(project), model, topic_dir)


def reset_locked(paths: ProjectPaths, name: str, topic_dir: Path | None = None) -> None:
    """``reset_model`` under the checkpoint lock: never pull state from under a running query."""
    busy = f"cannot reset model {name} while it is running"
    with lock_at(paths.checkpoint_lock(name), busy_message=busy, model=name):
        reset_model(paths, name, topic_dir)
