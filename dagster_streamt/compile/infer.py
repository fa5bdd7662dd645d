"""A model without ``materialized:`` gets one from its SQL and inputs, the way streamt infers it.

streamt: ``from:`` without ``sql:`` is a sink; a Gateway virtual topic is a view; everything else is
a topic (stateless SELECT/WHERE) or a Flink job (windows, aggregations, joins), both continuous. On
Spark both are ``stream`` models, with state when the SQL has it. Two Spark-specific rules make a
``table`` instead: a model whose inputs cannot be read as streams (JDBC sources, table models), as a
stream needs a streaming input; and a regular join of two streams (no time bound, not temporal),
whose result Flink keeps updating forever and Spark recomputes from all the data each run.
Partitioned models are tables.
"""

from __future__ import annotations

from dataclasses import replace

from ..spec.models import Model
from ..spec.project import Project
from ..spec.source import STREAMABLE_FORMATS
from .compiled import CompiledModel, CompiledProject


def _order(compiled: CompiledProject) -> list[str]:
    """Models upstream-first (a model's inputs are decided before it); cycles fall back to name order."""
    done: list[str] = []
    seen: set[str] = set()

    def visit(name: str, path: frozenset[str]) -> None:
        if name in seen or name in path or name not in compiled.models:
            return
        for up in compiled.models[name].upstream_models:
            visit(up, path | {name})
        seen.add(name)
        done.append(name)

    for name in sorted(compiled.models):
        visit(name, frozenset())
    return done


def _infer(model: Model, cm: CompiledModel, project: Project, resolved: dict[str, str]) -> tuple[str, str]:
    decided = model.implied_materialization
    if decided is not None:
        return decided
    streaming = [f"source {s}" for s in cm.sources
                 if s in project.sources and project.sources[s].resolved_format in STREAMABLE_FORMATS]
    streaming += [f"model {m}" for m in cm.refs if resolved.get(m) in ("stream", "view")]
    what = cm.features.describe() if cm.features is not None else "SQL"
    if not streaming and (cm.sources or cm.refs):
        return "table", f"{what}; no input can be read as a stream"
    if cm.features is not None and "join" in cm.features.joins and len(streaming) > 1:
        # Flink keeps both sides forever and updates the result; Spark recomputes it from all the data
        return "table", f"{what} of two streams without a time bound; recomputed each run"
    stateful = cm.features is not None and cm.features.stateful
    return "stream", f"{what}; with state" if stateful else what


def _event_column(model: Model, cm: CompiledModel, project: Project) -> str | None:
    """The model's event-time column: its own ``event_time``, else the one of an input it passes on."""
    if model.event_time is not None:
        return model.event_time.column
    outputs = {c.lower() for c in cm.output_columns} if cm.output_columns is not None else None
    times = [project.sources[s].event_time for s in cm.sources if s in project.sources]
    candidates = [t.column for t in times if t is not None]
    candidates += [project.event_columns[m] for m in cm.refs if m in project.event_columns]
    for column in candidates:
        if outputs is None or column.lower() in outputs:
            return column
    return None


def infer_materializations(project: Project, compiled: CompiledProject) -> CompiledProject:
    """Fill in every unset materialization, upstream first; record why in ``project.inferred``. Also
    record each model's event-time column (``project.event_columns``), inherited through its inputs."""
    resolved = {n: m.materialized for n, m in project.models.items() if m.materialized}
    models = dict(compiled.models)
    for name in _order(compiled):
        model = project.models[name]
        column = _event_column(model, models[name], project)
        if column is not None:
            project.event_columns[name] = column
        if model.materialized:
            continue
        mat, reason = _infer(model, models[name], project, resolved)
        resolved[name] = mat
        project.models[name] = model.model_copy(update={"materialized": mat})
        project.inferred[name] = reason
        models[name] = replace(models[name], materialized=mat)
    return replace(compiled, models=models)
