"""The column part of the docs payload: every model's and source's columns with their type,
description, classification (after masking) and one-hop lineage edges, plus where classified data
reaches exposures.

Edges are stored one hop upstream, as ``[relation, column, subtype]`` (the subtype names the type:
see ``LINEAGE_TYPES``); the page walks them transitively, exactly like
:meth:`ProjectColumnLineage.upstream` / ``downstream``, so a 10,000-model site stays linear in size.
"""

from __future__ import annotations

from typing import Any

from ..core.loaded import LoadedProject
from ..lineage.column_types import DIRECT_SUBTYPES, INDIRECT_SUBTYPES, ColumnEdge, ProjectColumnLineage
from ..lineage.project_columns import ClassificationReport, inferred_types, propagate_classification
from ..spec.envvars import Redactor
from ..spec.models import Column

Carried = dict[tuple[str, str], tuple[str, ...]]  # (relation, column) -> classes
LINEAGE_TYPES = {"DIRECT": list(DIRECT_SUBTYPES), "INDIRECT": list(INDIRECT_SUBTYPES)}


def _edge(e: ColumnEdge) -> list[str]:
    return [e.source.relation, e.source.column, e.subtype]


def _column(relation: str, name: str, col: Column | None, carried: Carried, red: Redactor) -> dict[str, Any]:
    """A column's entry: its name, what its YAML declares and the classes it carries after masking."""
    out: dict[str, Any] = {"name": name}
    if col is not None:
        if col.type:
            out["type"] = col.type
        if col.description:
            out["description"] = red.text(col.description)
        if col.tags:
            out["tags"] = sorted(col.tags)
        if not col.nullable:
            out["nullable"] = False
    if classes := carried.get((relation, name)):
        out["classification"] = list(classes)
    return out


def _classes(report: ClassificationReport) -> Carried:
    """Classes each column carries after masking. Where they came from is not stored per column (it
    would be a third of the page at 10,000 models): the page shows the DIRECT upstream tree with
    each classified column marked, and each exposure's received columns keep their origins."""
    return {(c.relation, c.column): c.classes for c in report.columns}


def source_columns(loaded: LoadedProject, report: ClassificationReport, red: Redactor) -> dict[str, list[Any]]:
    carried = _classes(report)
    return {name: [_column(name, c.name, c, carried, red) for c in loaded.project.sources[name].columns]
            for name in sorted(loaded.project.sources)}


def model_columns(loaded: LoadedProject, lineage: ProjectColumnLineage, report: ClassificationReport,
                  red: Redactor) -> dict[str, dict[str, Any]]:
    """Per model: ``columns`` (output order of the SELECT, then declared-only ones), ``dataset``
    edges (joins, filters, grouping: they affect every column) and analysis ``warnings``."""
    carried = _classes(report)
    types = inferred_types(loaded, lineage)
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(loaded.compiled.models):
        model = loaded.project.models[name]
        ml = lineage.models.get(name)
        declared = {c.name: c for c in model.columns}
        masks = model.masked_columns  # lower-cased column -> method, every way streamt writes masking
        names = list(ml.columns) if ml else []
        names += [c for c in declared if c not in names]
        cols = []
        for col in names:
            entry = _column(name, col, declared.get(col), carried, red)
            if "type" not in entry and (name, col) in types:
                entry["type"] = types[(name, col)]
                entry["type_inferred"] = True
            if col.lower() in masks:
                entry["mask"] = masks[col.lower()]
            if ml is not None and col in ml.fields:
                entry["edges"] = [_edge(e) for e in ml.fields[col]]
            elif ml is not None:
                entry["declared_only"] = True
            cols.append(entry)
        out[name] = {"columns": cols, "dataset": [_edge(e) for e in ml.dataset] if ml else [],
                     "warnings": [red.text(w) for w in ml.warnings] if ml else []}
    return out


def pii_flow(report: ClassificationReport) -> dict[str, Any]:
    """Classified columns each exposure receives, and the sensitive ones handed over unmasked."""
    return {
        "exposures": {e: [[c.relation, c.column, list(c.classes), list(c.origins)] for c in cols]
                      for e, cols in sorted(report.exposures.items())},
        "unmasked": sorted([e, m, c.column] for e, m, c in report.unmasked),
    }


def column_sections(loaded: LoadedProject, lineage: ProjectColumnLineage, red: Redactor) -> dict[str, Any]:
    report = propagate_classification(loaded, lineage)
    return {"source_columns": source_columns(loaded, report, red),
            "model_columns": model_columns(loaded, lineage, report, red),
            "pii": pii_flow(report), "lineage_types": LINEAGE_TYPES}
