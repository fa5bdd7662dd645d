"""Column lineage views for the CLI: trees with edge types, JSON, Mermaid; and model column lists."""

from __future__ import annotations

import json
from typing import Any

from .columns import LineageHit, ModelColumnLineage, ProjectColumnLineage
from .project_columns import ClassificationReport


def _kind(lineage: ProjectColumnLineage, relation: str) -> str:
    return "model" if relation in lineage.models else "source"


def _tree_lines(hits: list[LineageHit], lineage: ProjectColumnLineage, upstream: bool) -> list[str]:
    """Nest hits by their paths: each hit hangs under the column one step closer to the start."""
    children: dict[str, list[tuple[str, str]]] = {}
    start = ""
    for hit in sorted(hits, key=lambda h: (h.depth, str(h.ref))):
        step = hit.path[-1]
        parent = str(step.downstream if upstream else step.upstream)
        if hit.depth == 1:
            start = parent
        text = f"{hit.ref}  ({step.type} {step.subtype})"
        if _kind(lineage, hit.ref.relation) == "source":
            text += " [source]"
        children.setdefault(parent, []).append((str(hit.ref), text))
    lines: list[str] = []

    def walk(key: str, prefix: str, seen: set[str]) -> None:
        kids = children.get(key, [])
        for i, (ref, text) in enumerate(kids):
            last = i == len(kids) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}{text}")
            if ref not in seen:
                walk(ref, prefix + ("    " if last else "│   "), seen | {ref})

    if start:
        walk(start, "  ", {start})
    return lines


def _hits(lineage: ProjectColumnLineage, model: str, column: str, upstream: bool, downstream: bool,
          direct_only: bool) -> dict[str, list[LineageHit]]:
    """The traversals asked for, by direction ("upstream", "downstream")."""
    found: dict[str, list[LineageHit]] = {}
    if upstream:
        found["upstream"] = lineage.upstream(model, column, direct_only=direct_only)
    if downstream:
        found["downstream"] = lineage.downstream(model, column, direct_only=direct_only)
    return found


def column_ascii(lineage: ProjectColumnLineage, model: str, column: str, upstream: bool, downstream: bool,
                 direct_only: bool) -> str:
    out = [f"Column lineage for: {model}.{column}"]
    for direction, hits in _hits(lineage, model, column, upstream, downstream, direct_only).items():
        out.append(f"{direction.capitalize()}:")
        out.extend(_tree_lines(hits, lineage, direction == "upstream") or ["  (none)"])
    return "\n".join(out)


def column_json(lineage: ProjectColumnLineage, model: str, column: str, upstream: bool, downstream: bool,
                direct_only: bool) -> str:
    doc: dict[str, Any] = {"column": f"{model}.{column}"}
    for direction, hits in _hits(lineage, model, column, upstream, downstream, direct_only).items():
        doc[direction] = [h.to_dict() for h in hits]
    return json.dumps(doc, indent=2, sort_keys=True)


def _mid(ref: str) -> str:
    return "c_" + "".join(ch if ch.isalnum() else "_" for ch in ref)


def column_mermaid(lineage: ProjectColumnLineage, model: str, column: str, upstream: bool, downstream: bool,
                   direct_only: bool) -> str:
    steps = set()
    nodes = {f"{model}.{column}"}
    for hits in _hits(lineage, model, column, upstream, downstream, direct_only).values():
        for s in (step for h in hits for step in h.path):
            steps.add((str(s.upstream), str(s.downstream), f"{s.type} {s.subtype}"))
            nodes |= {str(s.upstream), str(s.downstream)}
    lines = ["graph LR"]
    for n in sorted(nodes):
        lines.append(f'    {_mid(n)}["{n}"]')
    for up, down, label in sorted(steps):
        arrow = "-->" if label.startswith("DIRECT") else "-.->"
        lines.append(f"    {_mid(up)} {arrow}|{label}| {_mid(down)}")
    lines.append(f"    style {_mid(f'{model}.{column}')} stroke-width:4px")
    return "\n".join(lines)


def model_columns_text(ml: ModelColumnLineage) -> str:
    out = [f"Columns of {ml.model}:"]
    width = max((len(c) for c in ml.columns), default=0)
    for col in ml.columns:
        edges = ml.fields.get(col, ())
        srcs = ", ".join(f"{e.source} ({e.type} {e.subtype})" for e in edges) or "(no column inputs)"
        out.append(f"  {col:<{width}}  <- {srcs}")
    if ml.dataset:
        out.append("Whole-dataset inputs:")
        out.extend(f"  {e.source} ({e.type} {e.subtype})" for e in ml.dataset)
    for w in ml.warnings:
        out.append(f"  warning: {w}")
    return "\n".join(out)


def classification_text(report: ClassificationReport, wanted: set[str] | None) -> str:
    cols = [c for c in report.columns if wanted is None or set(c.classes) & wanted]
    out = [f"Classified columns ({', '.join(sorted(wanted)) if wanted else 'any class'}): {len(cols)}"]
    for c in cols:
        out.append(f"  {c.relation}.{c.column}  [{', '.join(c.classes)}]  from {', '.join(c.origins)}")
    out.append("Exposures reached:")
    any_exp = False
    for exp, received in report.exposures.items():
        hit = [c for c in received if wanted is None or set(c.classes) & wanted]
        if hit:
            any_exp = True
            out.append(f"  {exp}: " + ", ".join(f"{c.relation}.{c.column}" for c in hit))
    if not any_exp:
        out.append("  (none)")
    return "\n".join(out)
