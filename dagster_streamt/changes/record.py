"""What a run records of each model's definition, so that ``streamt plan`` can class what changed since:
the model's facets, its column lineage and the declarations of the sources it reads, kept in the
materialization the run reports (Dagster's record of what each run did; the data's own state stays in
the Delta log).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from ..core.loaded import LoadedProject
from ..lineage.column_types import ModelColumnLineage, ProjectColumnLineage
from .facets import ModelFacets, ProjectFacets

FORMAT = 1  # of the record: a plan reads only its own format (an older one is compared by code version)


def definition_record(facets: ProjectFacets, name: str) -> dict[str, Any]:
    """The record of model ``name`` as JSON values, for its materialization's ``streamt/definition``."""
    compiled = facets.loaded.compiled.models.get(name)
    sources = sorted(compiled.sources) if compiled is not None else []
    lineage = facets.lineage.models.get(name)
    return json.loads(json.dumps({
        "format": FORMAT, "project": facets.loaded.project.name, "model": asdict(facets.models[name]),
        "lineage": lineage.to_dict() if lineage is not None else None,
        "sources": {s: facets.sources[s] for s in sources if s in facets.sources},
        "source_metadata": {s: facets.source_metadata[s] for s in sources if s in facets.source_metadata}},
        sort_keys=True, default=str))


def readable(record: Any) -> bool:
    return isinstance(record, Mapping) and record.get("format") == FORMAT and isinstance(record.get("model"), Mapping)


def facets_from_records(head: LoadedProject, head_facets: ProjectFacets,
                        records: Mapping[str, Mapping[str, Any]]) -> ProjectFacets:
    """The project as the models' last runs defined it, as :func:`~.classify.classify` compares it; a
    source no recorded model reads is taken as it is now (its declaration matters only to its readers)."""
    models: dict[str, ModelFacets] = {}
    lineage: dict[str, ModelColumnLineage] = {}
    sources = dict(head_facets.sources)
    docs = dict(head_facets.source_metadata)
    for name, record in sorted(records.items()):
        if not readable(record):
            continue
        m = dict(record["model"])
        models[name] = ModelFacets(
            name=str(m["name"]), materialized=str(m["materialized"]), sql=m.get("sql"),
            settings=dict(m.get("settings") or {}), metadata=dict(m.get("metadata") or {}),
            columns=tuple(m["columns"]) if m.get("columns") else None, types=dict(m.get("types") or {}),
            target=m.get("target"), stateful_stream=bool(m.get("stateful_stream")))
        if record.get("lineage"):
            lineage[name] = ModelColumnLineage.from_dict(record["lineage"])
        sources.update(record.get("sources") or {})
        docs.update(record.get("source_metadata") or {})
    return ProjectFacets(head, ProjectColumnLineage(lineage), models, sources, docs)
