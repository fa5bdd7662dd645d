"""Build the graph from a loaded project and its compiled models; report refs to missing nodes
(tests, exposures) and every cycle."""

from __future__ import annotations

from ..compile.compiled import CompiledProject
from ..core.ids import name_of, node_id, split_id
from ..spec.connectors import sink_target
from ..spec.errors import Diagnostics
from ..spec.models import Model, NodeRef
from ..spec.project import Project
from ..spec.suggest import did_you_mean
from .cycles import find_cycles
from .graph import Graph, Node


def _source_detail(project: Project, name: str) -> str:
    s = project.sources[name]
    where = s.path or s.table or s.topic or s.options.get("dbtable") or ""
    fmt = s.resolved_format
    kind = f"{fmt} files" if fmt in ("json", "csv", "parquet", "orc", "text", "avro") else fmt
    return f"{kind} {where}".strip()


def _sink_format(model: Model) -> str | None:
    sink = model.sink_config
    return sink_target(sink, model.name).format if sink is not None else None


def build_graph(project: Project, compiled: CompiledProject) -> tuple[Graph, Diagnostics]:
    g = Graph()
    diags = Diagnostics()
    for name, s in project.sources.items():
        g.add_node(Node(node_id("source", name), "source", name, s.resolved_format, s.owner, tuple(s.tags),
                        s.description, _source_detail(project, name)))
    for name, m in project.models.items():
        if not m.enabled:
            continue
        g.add_node(Node(node_id("model", name), "model", name, m.materialized, m.owner, tuple(sorted(m.tags)),
                        m.description, _sink_format(m)))
    for name, e in project.exposures.items():
        g.add_node(Node(node_id("exposure", name), "exposure", name, None, e.owner, tuple(sorted(e.tags)),
                        e.description, e.type))

    for name, cm in compiled.models.items():
        me = node_id("model", name)
        for src in cm.sources:
            g.add_edge(node_id("source", src), me)
        for up in cm.upstream_models:
            g.add_edge(node_id("model", up), me)

    models = [n for n, m in project.models.items() if m.enabled]
    for name, t in project.tests.items():
        if not t.enabled:
            continue
        target = f"model {t.model}" if t.model else f"source {t.source}"
        g.add_node(Node(node_id("test", name), "test", name, t.type, None, tuple(sorted(t.tags)),
                        t.description, target))
        file, line = project.where("test", name, "model" if t.model else "source")
        if t.model is not None:
            if t.model in compiled.models:
                g.add_edge(node_id("model", t.model), node_id("test", name))
            else:
                hint = did_you_mean(t.model, models) or "name a model defined in this project"
                if t.model in project.sources:
                    hint = f"{t.model!r} is a source: write `source: {t.model}`"
                diags.add("REF003", f"test {name!r} targets unknown model {t.model!r}", file=file, line=line, hint=hint)
        elif t.source is not None:
            if t.source in project.sources:
                g.add_edge(node_id("source", t.source), node_id("test", name))
            else:
                hint = did_you_mean(t.source, project.sources) or "name a source defined in this project"
                diags.add("REF003", f"test {name!r} targets unknown source {t.source!r}", file=file, line=line,
                          hint=hint)

    for name, e in project.exposures.items():
        me = node_id("exposure", name)
        for key, refs in (("consumes", e.consumes), ("depends_on", e.depends_on), ("produces", e.produces)):
            for i, ref in enumerate(refs):
                found = _resolve_ref(project, compiled, ref)
                if found is None:
                    _missing(diags, project, name, key, i, ref, models)
                elif key == "produces":
                    g.add_edge(me, found)
                else:
                    g.add_edge(found, me)

    g.freeze()
    cycles, extra = find_cycles(g)
    for cycle in cycles:
        first_kind, first_name = split_id(cycle[0])
        file, line = project.where(first_kind, first_name)
        text = " -> ".join(name_of(n) for n in cycle)
        diags.add("REF006", f"dependency cycle: {text}", file=file, line=line,
                  hint="break the cycle: a model cannot read (directly or not) from itself")
    if extra:
        diags.add("REF006", f"{extra} more dependency cycles not listed", file="", line=0,
                  hint="break the cycles listed above first")
    return g, diags


def _resolve_ref(project: Project, compiled: CompiledProject, ref: NodeRef | str) -> str | None:
    if isinstance(ref, str):
        if ref in compiled.models:
            return node_id("model", ref)
        return node_id("source", ref) if ref in project.sources else None
    if ref.ref is not None:
        return node_id("model", ref.ref) if ref.ref in compiled.models else None
    return node_id("source", ref.source) if ref.source in project.sources else None


def _missing(diags: Diagnostics, project: Project, exposure: str, key: str, index: int,
             ref: NodeRef | str, models: list[str]) -> None:
    file, line = project.where("exposure", exposure, key, index)
    if isinstance(ref, str) or ref.ref is not None:
        target = ref if isinstance(ref, str) else ref.ref
        hint = did_you_mean(str(target), [*models, *project.sources]) or "name a model of this project"
        diags.add("REF004", f"exposure {exposure!r} {key} unknown model {target!r}", file=file, line=line, hint=hint)
    else:
        hint = did_you_mean(str(ref.source), project.sources) or "name a source of this project"
        diags.add("REF004", f"exposure {exposure!r} {key} unknown source {ref.source!r}", file=file, line=line,
                  hint=hint)
