"""Selection syntax shared by the CLI, schedules and Dagster jobs.

``name``, ``+name`` (with upstream), ``name+`` (with downstream), ``+name+``, ``tag:x``,
``owner:y``, ``materialized:stream``, ``source:x``, ``exposure:x``, ``model:x``, shell-style
wildcards (``orders_*``); space- or comma-separated terms are a union.
"""

from __future__ import annotations

import fnmatch
import re

from ..spec.suggest import did_you_mean
from .graph import Graph

_TERM = re.compile(r"^(?P<up>\+)?(?P<body>[^+]+?)(?P<down>\+)?$")
METHODS = ("tag", "owner", "materialized", "model", "source", "exposure", "test", "type")


class SelectionError(ValueError):
    pass


def _match_body(graph: Graph, body: str) -> set[str]:
    method, sep, value = body.partition(":")
    if not sep:
        method, value = "", body
    if sep and method not in METHODS:
        raise SelectionError(f"unknown selector method {method!r}; "
                             f"{did_you_mean(method, METHODS) or 'use one of ' + ', '.join(METHODS)}")
    wild = any(c in value for c in "*?[")

    def name_ok(name: str) -> bool:
        return fnmatch.fnmatchcase(name, value) if wild else name == value

    hits: set[str] = set()
    for nid, node in graph.nodes.items():
        if method == "tag":
            ok = any(name_ok(t) for t in node.tags)
        elif method == "owner":
            ok = node.owner is not None and name_ok(node.owner)
        elif method == "materialized":
            ok = node.type == "model" and node.materialized is not None and name_ok(node.materialized)
        elif method == "type":
            ok = name_ok(node.type)
        elif method in ("model", "source", "exposure", "test"):
            ok = node.type == method and name_ok(node.name)
        else:
            ok = name_ok(node.name) and (wild or nid == graph.resolve(value))
        if ok:
            hits.add(nid)
    if not hits and not sep and not wild and value in graph.nodes:
        hits.add(value)
    return hits


def select(graph: Graph, expression: str, types: tuple[str, ...] | None = ("model",)) -> list[str]:
    """Node ids matching ``expression`` (sorted); ``types`` filters the result (None keeps all)."""
    terms = [t for t in re.split(r"[\s,]+", expression.strip()) if t]
    if not terms:
        raise SelectionError("empty selection")
    out: set[str] = set()
    for term in terms:
        m = _TERM.match(term)
        if not m:
            raise SelectionError(f"cannot read selection term {term!r}")
        hits = _match_body(graph, m.group("body"))
        if not hits:
            names = sorted({n.name for n in graph.nodes.values()})
            hint = did_you_mean(m.group("body").split(":")[-1], names)
            raise SelectionError(f"selection {term!r} matches nothing" + (f"; {hint}" if hint else ""))
        out |= hits
        if m.group("up"):
            out |= graph.upstream_all(hits)  # one search from all matches, not one each
        if m.group("down"):
            out |= graph.downstream_all(hits)
    if types is not None:
        out = {n for n in out if graph.nodes[n].type in types}
    return sorted(out)
