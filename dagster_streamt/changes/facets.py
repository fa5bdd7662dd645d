"""A model's definition as a change is judged: what decides its rows (rendered SQL, settings), what it
outputs (columns and known types), where it writes outside the warehouse (a topic, a sink's target),
and apart from all of these what only describes it (description, owner, tags, its tests).

Keys that change no row (:data:`~dagster_streamt.spec.model.DESCRIPTIVE_KEYS`) are *metadata*: editing
them reruns nothing. Every other key counts, so an unknown edit errs on the side of a rebuild.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..core.loaded import LoadedProject
from ..lineage.column_types import ProjectColumnLineage
from ..lineage.project_columns import column_lineage, inferred_types
from ..spec.connectors import sink_target
from ..spec.model import DESCRIPTIVE_KEYS
from ..spec.topics import model_topic

METADATA_KEYS = DESCRIPTIVE_KEYS | {"columns", "name", "sql"}  # columns: their types are compared as output types
SOURCE_METADATA_KEYS = frozenset({"description", "owner", "tags", "meta", "freshness", "name", "columns"})


@dataclass(frozen=True)
class ModelFacets:
    name: str
    materialized: str
    sql: str | None  # rendered (relations by name); None for a sink that only names its input
    settings: dict[str, Any]  # every key that may change rows, as JSON values
    metadata: dict[str, Any]  # what only describes the model, its columns' documentation and its tests
    columns: tuple[str, ...] | None  # output columns, when lineage knows them
    types: dict[str, str] = field(default_factory=dict)  # column -> declared or carried type, when known
    target: str | None = None  # the topic or sink target it writes outside the warehouse
    stateful_stream: bool = False  # a stream whose checkpoint holds state (windows, aggregations, joins)


@dataclass(frozen=True)
class ProjectFacets:
    loaded: LoadedProject
    lineage: ProjectColumnLineage
    models: dict[str, ModelFacets]
    sources: dict[str, dict[str, Any]]  # source -> its declaration minus metadata
    source_metadata: dict[str, dict[str, Any]]


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _target(loaded: LoadedProject, name: str) -> str | None:
    project = loaded.project
    model = project.models[name]
    sink = model.sink_config
    if sink is not None:
        target = sink_target(sink, name)
        where = target.path or target.options.get("topic") or target.options.get("dbtable") or \
            target.options.get("table") or json.dumps(target.options, sort_keys=True)
        return f"{target.format} {where}"
    topic = model_topic(project, model)
    return f"topic {topic}" if topic is not None else None


def facets_of(loaded: LoadedProject, *, use_cache: bool = True) -> ProjectFacets:
    """Every model's and source's facets; column lineage from the project's cache when ``use_cache``."""
    project = loaded.project
    lineage = column_lineage(loaded, use_cache=use_cache)
    types = inferred_types(loaded, lineage)
    tests: dict[str, list[Any]] = {}
    for test in project.tests.values():
        target = getattr(test, "model", None) or getattr(test, "source", None)
        if target:
            tests.setdefault(target, []).append(test.model_dump(mode="json", by_alias=True))
    models: dict[str, ModelFacets] = {}
    for name, model in project.models.items():
        compiled = loaded.compiled.models.get(name)
        dumped = _json(model.model_dump(mode="json", by_alias=True))
        settings = {k: v for k, v in dumped.items() if k not in METADATA_KEYS}
        docs = {k: v for k, v in dumped.items() if k in METADATA_KEYS and k not in ("sql", "name")}
        docs["tests"] = sorted(tests.get(name, []), key=lambda t: json.dumps(t, sort_keys=True))
        ml = lineage.models.get(name)
        columns = ml.columns if ml is not None and ml.columns else (compiled.output_columns if compiled else None)
        features = compiled.features if compiled is not None else None
        materialized = compiled.materialized if compiled is not None else str(model.materialized)
        models[name] = ModelFacets(
            name=name, materialized=materialized, sql=compiled.sql if compiled is not None else None,
            settings=settings, metadata=docs, columns=tuple(columns) if columns else None,
            types={c: t for (m, c), t in types.items() if m == name}, target=_target(loaded, name),
            stateful_stream=materialized == "stream" and features is not None and features.stateful)
    sources: dict[str, dict[str, Any]] = {}
    source_docs: dict[str, dict[str, Any]] = {}
    for name, source in project.sources.items():
        dumped = _json(source.model_dump(mode="json", by_alias=True))
        sources[name] = {k: v for k, v in dumped.items() if k not in SOURCE_METADATA_KEYS}
        sources[name]["columns"] = [[c.get("name"), c.get("type")] for c in dumped.get("columns") or []]
        source_docs[name] = {k: v for k, v in dumped.items() if k in SOURCE_METADATA_KEYS and k != "name"}
        source_docs[name]["tests"] = sorted(tests.get(name, []), key=lambda t: json.dumps(t, sort_keys=True))
    return ProjectFacets(loaded, lineage, models, sources, source_docs)
