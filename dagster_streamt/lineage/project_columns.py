"""Column lineage for a loaded project: computed on demand (it parses every model again, which the
table-level CLI does not need) and cached in ``target/`` by a hash of its inputs.

Also the PII view: a source column's ``classification`` flows downstream along DIRECT edges until
a model masks it (``security.policies: [{mask: {column: ...}}]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compile.compiled import relation_name
from ..core.cache import read_cache, write_cache
from ..core.ids import name_of, node_id, split_id
from ..core.loaded import LoadedProject
from .columns import ProjectColumnLineage, analyze_columns, lineage_cache_key

CACHE_FILE = "target/.streamt-columns.pickle"
SENSITIVE = frozenset({"sensitive", "highly_sensitive", "pii"})


def _inputs(loaded: LoadedProject) -> tuple[dict[str, str | None], list[str], dict[str, list[str]],
                                            dict[str, list[str]]]:
    models: dict[str, str | None] = {}
    for name, cm in loaded.compiled.models.items():
        if cm.sql:
            models[name] = cm.sql
        elif cm.from_:
            models[name] = f"SELECT * FROM {relation_name(cm.from_)}"  # a sink passes its input through
        else:
            models[name] = None
    order = [name_of(i) for i in loaded.graph.topological_order(loaded.graph.of_type("model"))]
    sources = {n: [c.name for c in s.columns] for n, s in loaded.project.sources.items()}
    declared = {n: [c.name for c in m.columns] for n, m in loaded.project.models.items() if m.columns}
    return models, order, sources, declared


def column_lineage(loaded: LoadedProject, *, use_cache: bool = True) -> ProjectColumnLineage:
    models, order, sources, declared = _inputs(loaded)
    key = lineage_cache_key(models, sources, declared)
    path = loaded.project.root / CACHE_FILE
    if use_cache:
        cached = read_cache(path, lambda stored: stored == key)
        if isinstance(cached, ProjectColumnLineage):
            return cached
    result = analyze_columns(models, order, sources, declared)
    if use_cache:
        write_cache(path, key, result)
    return result


def inferred_types(loaded: LoadedProject, lineage: ProjectColumnLineage | None) -> dict[tuple[str, str], str]:
    """Declared types carried through IDENTITY edges (a column copied as is keeps its type)."""
    types = {(n, c.name): c.type for n, s in loaded.project.sources.items() for c in s.columns if c.type}
    types.update({(n, c.name): c.type for n, m in loaded.project.models.items() for c in m.columns if c.type})
    if lineage is None:
        return types
    for nid in loaded.graph.topological_order(loaded.graph.of_type("model")):
        ml = lineage.models.get(name_of(nid))
        if ml is None:
            continue
        for col in ml.columns:
            direct = [e for e in ml.fields.get(col, ()) if e.type == "DIRECT"]
            if len(direct) == 1 and direct[0].subtype == "IDENTITY" and (ml.model, col) not in types:
                up = types.get((direct[0].source.relation, direct[0].source.column))
                if up:
                    types[(ml.model, col)] = up
    return types


@dataclass(frozen=True)
class Classified:
    """A column that carries classified data, and where that data came from."""

    relation: str
    column: str
    classes: tuple[str, ...]
    origins: tuple[str, ...]  # "source.column" of the classified inputs


@dataclass
class ClassificationReport:
    columns: list[Classified] = field(default_factory=list)
    exposures: dict[str, list[Classified]] = field(default_factory=dict)  # exposure -> columns it receives
    unmasked: list[tuple[str, str, Classified]] = field(default_factory=list)  # (exposure, model, column)
    unencrypted: list[tuple[str, str, Classified]] = field(default_factory=list)  # highly sensitive, not hashed


def propagate_classification(loaded: LoadedProject, lineage: ProjectColumnLineage) -> ClassificationReport:
    """Follow DIRECT edges from classified source columns; a model's mask policy stops the flow."""
    p = loaded.project
    carried: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for sname, s in p.sources.items():
        for c in s.columns:
            if c.classification:
                carried[(sname, c.name)] = ({c.classification}, {f"{sname}.{c.name}"})
    order = [name_of(i) for i in loaded.graph.topological_order(loaded.graph.of_type("model"))]
    for name in order:
        ml = lineage.models.get(name)
        if ml is None:
            continue
        model = p.models[name]
        masked = model.masked_columns  # lower-cased column -> method, whichever way streamt wrote it
        declared = model.classifications
        for col in ml.columns:
            classes: set[str] = set()
            origins: set[str] = set()
            for edge in ml.fields.get(col, ()):
                if edge.type != "DIRECT":
                    continue
                came = carried.get((edge.source.relation, edge.source.column))
                if came:
                    classes |= came[0]
                    origins |= came[1]
            method = masked.get(col.lower())
            if method is not None:
                # a partial mask leaves part of the value: a highly sensitive column stays one
                keep = {"highly_sensitive"} & classes if method == "partial" else set()
                classes, origins = (keep, origins) if keep else (set(), set())
            if col.lower() in declared:
                classes.add(declared[col.lower()])
                origins.add(f"{name}.{col}")
            if classes:
                carried[(name, col)] = (classes, origins)
    report = ClassificationReport()
    for (rel, col), (classes, origins) in sorted(carried.items()):
        report.columns.append(Classified(rel, col, tuple(sorted(classes)), tuple(sorted(origins))))
    by_rel: dict[str, list[Classified]] = {}
    for cl in report.columns:
        by_rel.setdefault(cl.relation, []).append(cl)
    for ename in sorted(p.exposures):
        received: list[Classified] = []
        for up in loaded.graph.upstream_of(node_id("exposure", ename)):
            kind, rel = split_id(up)
            for cl in by_rel.get(rel, []):
                received.append(cl)
                if kind == "model" and SENSITIVE & set(cl.classes):
                    report.unmasked.append((ename, rel, cl))
                if kind == "model" and "highly_sensitive" in cl.classes:
                    report.unencrypted.append((ename, rel, cl))
        if received:
            report.exposures[ename] = received
    return report
