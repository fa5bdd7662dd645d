"""Table-level lineage views: ASCII trees, JSON and Mermaid, all deterministic.

Only data nodes (sources, models, exposures) are drawn; tests hang off models and are listed by
``streamt test``. A node reached twice in one tree is printed once in full, then as a reference,
so a wide project does not explode the output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from ..graph.graph import Graph, Node
from ..graph.impact import impact

DATA_TYPES = ("source", "model", "exposure")
HERE = "← YOU ARE HERE"


def label(node: Node) -> str:
    if node.type == "model":
        return f"{node.name} ({node.materialized})"
    if node.type == "source":
        return f"{node.name} (source: {node.detail})" if node.detail else f"{node.name} (source)"
    if node.type == "exposure":
        extra = f"{node.detail}, owner {node.owner}" if node.owner else f"{node.detail}"
        return f"{node.name} (exposure: {extra})"
    return f"{node.name} ({node.type})"


def _children(graph: Graph, nid: str, up: bool, keep: set[str] | None) -> list[str]:
    nxt = graph.upstream_of(nid) if up else graph.downstream_of(nid)
    return [n for n in nxt if graph.nodes[n].type in DATA_TYPES and (keep is None or n in keep)]


Annotate = Callable[[Node], str]


def _tree(graph: Graph, root: str, up: bool, keep: set[str] | None, prefix: str, out: list[str],
          seen: set[str], depth: int | None, annotate: Annotate | None = None) -> None:
    kids = _children(graph, root, up, keep)
    if depth is not None and depth <= 0:
        if kids:
            out.append(f"{prefix}└── … {len(kids)} more")
        return
    for i, kid in enumerate(kids):
        last = i == len(kids) - 1
        branch = "└── " if last else "├── "
        text = label(graph.nodes[kid]) + (annotate(graph.nodes[kid]) if annotate else "")
        if kid in seen and _children(graph, kid, up, keep):
            out.append(f"{prefix}{branch}{text} (see above)")
            continue
        out.append(f"{prefix}{branch}{text}")
        seen.add(kid)
        _tree(graph, kid, up, keep, prefix + ("    " if last else "│   "), out, seen,
              None if depth is None else depth - 1, annotate)


def ascii_focus(graph: Graph, nid: str, upstream: bool, downstream: bool, depth: int | None = None,
                annotate: Annotate | None = None, footer: str | None = None) -> str:
    """``annotate`` appends text to a node's label (e.g. its last run); ``footer`` ends the view."""
    node = graph.nodes[nid]

    def section(up: bool) -> list[str]:
        lines: list[str] = []
        _tree(graph, nid, up, None, "  ", lines, set(), depth, annotate)
        return ["Upstream:" if up else "Downstream:", *(lines or ["  (none)"])]

    out = [f"Lineage for: {node.name}", *(section(True) if upstream else []), f"{label(node)} {HERE}"]
    if downstream:
        out += [*section(False), ""]
        out.append(impact(graph, nid).sentence(node.name))
    if footer:
        out.append(footer)
    return "\n".join(out)


def ascii_graph(graph: Graph, keep: set[str] | None = None) -> str:
    """The whole graph (or ``keep``'s part) as trees from its roots."""
    nodes = [n for n in graph.nodes if graph.nodes[n].type in DATA_TYPES and (keep is None or n in keep)]
    roots = [n for n in nodes if not [u for u in _children(graph, n, True, keep)]]
    out: list[str] = []
    seen: set[str] = set()
    for root in roots:
        out.append(label(graph.nodes[root]))
        seen.add(root)
        _tree(graph, root, False, keep, "", out, seen, None)
    return "\n".join(out) if out else "(no nodes)"


def _kept(graph: Graph, ids: Iterable[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The data nodes among ``ids`` (sorted) and the edges between them."""
    keep = sorted(i for i in set(ids) if graph.nodes[i].type in DATA_TYPES)
    keep_set = set(keep)
    return keep, [(s, d) for s, d in graph.edges() if s in keep_set and d in keep_set]


def subgraph(graph: Graph, ids: Iterable[str]) -> dict[str, object]:
    keep, edges = _kept(graph, ids)
    return {"nodes": [graph.nodes[i].to_dict() for i in keep], "edges": [{"from": s, "to": d} for s, d in edges]}


def to_json(graph: Graph, ids: Iterable[str], focus: str | None = None, with_impact: bool = False) -> str:
    doc: dict[str, object] = subgraph(graph, ids)
    if focus:
        doc["focus"] = focus
    if focus and with_impact:
        doc["impact"] = impact(graph, focus).to_dict()
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)


def _mermaid_id(nid: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in nid)


def to_mermaid(graph: Graph, ids: Iterable[str], focus: str | None = None) -> str:
    keep, edges = _kept(graph, ids)
    lines = ["graph LR"]
    shapes = {"source": ('[("', '")]'), "model": ('["', '"]'), "exposure": ('{{"', '"}}')}
    for nid in keep:
        n = graph.nodes[nid]
        left, right = shapes[n.type]
        text = label(n).replace('"', "'")
        lines.append(f"    {_mermaid_id(n.id)}{left}{text}{right}")
    for s, d in edges:
        lines.append(f"    {_mermaid_id(s)} --> {_mermaid_id(d)}")
    lines += [
        "    classDef source fill:#fee2e2,stroke:#ef4444",
        "    classDef model fill:#e0e7ff,stroke:#5046e5",
        "    classDef exposure fill:#dcfce7,stroke:#16a34a",
        "    classDef focus stroke-width:4px",
    ]
    for kind in DATA_TYPES:
        members = [_mermaid_id(nid) for nid in keep if graph.nodes[nid].type == kind]
        if members:
            lines.append(f"    class {','.join(members)} {kind}")
    if focus:
        lines.append(f"    class {_mermaid_id(focus)} focus")
    return "\n".join(lines)
