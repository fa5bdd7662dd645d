"""How a sink writes: its mode and upsert key, decided from its config and the kind of its input.

Defaults make every export equal to the model's current data: a snapshot input (table, view) replaces
the export on each run; a stream input appends each micro-batch exactly once, or upserts it when the
sink has a key. ``mode: append`` on a snapshot keeps every run's rows (a history table) and is only
used when asked for. Nothing here touches Spark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...spec.connectors import model_key, sink_target
from ...spec.models import Model
from ...spec.project import Project
from ...spec.topics import local_dir
from ..errors import ModelRunError

Mode = Literal["replace", "append", "upsert"]


@dataclass(frozen=True)
class SinkPlan:
    mode: Mode
    key: tuple[str, ...]  # upsert / de-duplication key; empty without one
    incremental: bool  # the input is a stream: one write per micro-batch


def plan_sink(project: Project, model: Model, incremental: bool) -> SinkPlan:
    sink = model.sink_config
    assert sink is not None
    key = model_key(model)
    fmt = sink_target(sink, model.name, local_dir(project)).format
    mode: Mode | None = "replace" if sink.mode == "overwrite" else sink.mode
    file, line = project.where("model", model.name, "sink", "mode")
    where = f" ({file}:{line})" if file else ""
    if mode is None and fmt == "kafka":
        mode = "append"  # a topic is a log; a key becomes the message key (compacted topics keep the latest)
    elif mode is None:
        mode = ("upsert" if key else "append") if incremental else "replace"
    if mode == "upsert" and not key:
        raise ModelRunError(f"sink {model.name}: mode upsert needs a key{where}; add `sink.key: [column, ...]` "
                            "(or the model's `key:`)", model.name)
    if mode == "replace" and incremental:
        raise ModelRunError(f"sink {model.name}: mode {sink.mode} needs a snapshot input (a table or view), but it "
                            f"reads a stream, which is exported incrementally{where}; remove `mode:` (append each "
                            "micro-batch once) or add a key to upsert", model.name)
    if fmt == "kafka" and mode != "append":
        raise ModelRunError(f"sink {model.name}: a Kafka topic is a log and cannot be replaced or upserted{where}; "
                            "use `mode: append` (a compacted topic keeps the latest value per message key)",
                            model.name)
    return SinkPlan(mode, key, incremental)


def check_key_columns(project: Project, model: Model, key: tuple[str, ...], columns: list[str]) -> None:
    """A clear, located error when the key names columns the sink's query does not output."""
    missing = [k for k in key if k not in columns]
    if not missing:
        return
    sink = model.sink_config
    at = ("sink", "key") if sink is not None and sink.key else ("key",)
    file, line = project.where("model", model.name, *at)
    where = f"{file}:{line}: " if file else ""
    raise ModelRunError(f"{where}sink {model.name}: key column(s) {', '.join(missing)} are not in its output "
                        f"({', '.join(columns)}); fix `{'.'.join(at)}` or select the column(s)", model.name)
