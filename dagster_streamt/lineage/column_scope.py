"""Edge algebra and name resolution used while walking one model's query.

Edges are plain tuples ``(relation, column, type, subtype)`` during the walk (cheap to hash and to
put in sets); they become :class:`ColumnEdge` objects only in the final result. Every relation in a
FROM clause is a :class:`Rel` that maps a column name to the edges of that column, already composed
down to models/sources, so CTEs and subqueries never appear in the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

Edge = tuple[str, str, str, str]
Mode = tuple[str, str]  # (type, subtype) applied to the columns found below a node
Edges = frozenset[Edge]

DIRECT = "DIRECT"
INDIRECT = "INDIRECT"
IDENTITY: Mode = (DIRECT, "IDENTITY")
_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}
EMPTY: Edges = frozenset()

HAS, MAYBE, NO = 2, 1, 0  # does a relation have a column: known yes / unknown schema / known no


def bump(mode: Mode, subtype: str) -> Mode:
    """Descend into a DIRECT context of at least ``subtype``; an INDIRECT context stays as it is."""
    if mode[0] != DIRECT or _RANK[mode[1]] >= _RANK[subtype]:
        return mode
    return (DIRECT, subtype)


def indirect(mode: Mode, subtype: str) -> Mode:
    """Descend into an INDIRECT context (e.g. a CASE condition); an outer INDIRECT one wins."""
    return mode if mode[0] == INDIRECT else (INDIRECT, subtype)


def compose(mode: Mode, edges: Iterable[Edge]) -> set[Edge]:
    """Edges of a column used in context ``mode``: the stronger DIRECT subtype wins; INDIRECT sticks."""
    mtype, msub = mode
    if mtype == INDIRECT:
        return {(r, c, INDIRECT, msub) for r, c, _, _ in edges}
    if msub == "IDENTITY":
        return set(edges)
    rank = _RANK[msub]
    return {(r, c, t, msub) if t == DIRECT and _RANK[s] < rank else (r, c, t, s) for r, c, t, s in edges}


def normalize(edges: Iterable[Edge]) -> Edges:
    """Keep one DIRECT edge per source column (the strongest subtype) and all distinct INDIRECT ones."""
    best: dict[tuple[str, str], str] = {}
    out: set[Edge] = set()
    for r, c, t, s in edges:
        if t == DIRECT:
            prev = best.get((r, c))
            if prev is None or _RANK[s] > _RANK[prev]:
                best[(r, c)] = s
        else:
            out.add((r, c, t, s))
    out.update((r, c, DIRECT, s) for (r, c), s in best.items())
    return frozenset(out)


class Rel:
    """A relation visible in a FROM clause."""

    alias: str
    columns: list[str] | None  # output names in order; None when not fully known
    dataset: Edges = EMPTY  # row-affecting edges to propagate into the reading query

    def probe(self, name: str) -> int:
        """HAS/MAYBE/NO for column ``name`` (matched case-insensitively, as Spark does)."""
        raise NotImplementedError

    def lookup(self, name: str) -> Edges | None:
        """Edges of column ``name``, or None when the relation cannot provide it."""
        raise NotImplementedError


class BaseRel(Rel):
    """A model, a source or an external table: its columns are the lineage endpoints."""

    def __init__(self, alias: str, relation: str, columns: list[str] | None) -> None:
        self.alias = alias
        self.relation = relation
        self.columns = columns
        self._index = {c.lower(): c for c in columns} if columns is not None else None

    def probe(self, name: str) -> int:
        if self._index is None:
            return MAYBE
        return HAS if name.lower() in self._index else NO

    def lookup(self, name: str) -> Edges | None:
        if self._index is None:
            return frozenset({(self.relation, name, DIRECT, "IDENTITY")})
        declared = self._index.get(name.lower())
        return None if declared is None else frozenset({(self.relation, declared, DIRECT, "IDENTITY")})


class DerivedRel(Rel):
    """Output of a (sub)query or CTE: named items, plus ``SELECT *`` over relations of unknown schema."""

    def __init__(
        self,
        items: list[tuple[str, Edges]],
        passthrough: list[Rel] | None = None,
        dataset: Edges = EMPTY,
        alias: str = "",
    ) -> None:
        self.alias = alias
        self.items = items
        self.passthrough = passthrough or []
        self.dataset = dataset
        self.columns = None if self.passthrough else [n for n, _ in items]
        self._index: dict[str, Edges] = {}
        for name, edges in items:
            self._index.setdefault(name.lower(), edges)

    def probe(self, name: str) -> int:
        if name.lower() in self._index:
            return HAS
        return max((p.probe(name) for p in self.passthrough), default=NO)

    def lookup(self, name: str) -> Edges | None:
        edges = self._index.get(name.lower())
        if edges is not None:
            return edges
        hits = [p for p in self.passthrough if p.probe(name) == HAS]
        if not hits:
            hits = [p for p in self.passthrough if p.probe(name) == MAYBE]
        return hits[0].lookup(name) if len(hits) == 1 else None


class MergedRel(Rel):
    """Union of branches whose column lists are unknown: columns are matched by name in each."""

    def __init__(self, branches: list[Rel]) -> None:
        self.alias = ""
        self.branches = branches
        self.columns = None

    def probe(self, name: str) -> int:
        return max(b.probe(name) for b in self.branches)

    def lookup(self, name: str) -> Edges | None:
        found = [e for b in self.branches if (e := b.lookup(name)) is not None]
        return frozenset().union(*found) if found else None


class GeneratorRel(Rel):
    """Columns produced by ``LATERAL VIEW explode(...)``: all derive from the generator's arguments."""

    def __init__(self, alias: str, columns: list[str] | None, edges: Edges) -> None:
        self.alias = alias
        self.columns = columns
        self.edges = edges
        self._keys = {c.lower() for c in columns} if columns is not None else None

    def probe(self, name: str) -> int:
        if self._keys is None:
            return MAYBE
        return HAS if name.lower() in self._keys else NO

    def lookup(self, name: str) -> Edges | None:
        return self.edges if self._keys is None or name.lower() in self._keys else None


@dataclass
class Scope:
    """Name-resolution environment of one SELECT."""

    model: str
    warn: Callable[[str], None]
    parent: Scope | None = None
    ctes: dict[str, Any] = field(default_factory=dict)
    rels: dict[str, Rel] = field(default_factory=dict)  # lower alias -> relation, FROM order
    using: dict[str, Edges] = field(default_factory=dict)  # JOIN ... USING keys, already merged
    aliases: dict[str, Edges] = field(default_factory=dict)  # SELECT aliases and GROUP BY window
    named_windows: dict[str, Any] = field(default_factory=dict)
    lambda_vars: frozenset[str] = frozenset()
    prefer_alias: bool = False  # ORDER BY: SELECT aliases shadow input columns

    def find_rel(self, key: str) -> Rel | None:
        scope: Scope | None = self
        while scope is not None:
            if key in scope.rels:
                return scope.rels[key]
            scope = scope.parent
        return None

    def resolve(self, name: str, display: str | None = None) -> Edges | None:
        """Edges of unqualified column ``name``; warns (naming it) when unknown or ambiguous.

        Order: USING keys, the single relation that has it, SELECT aliases (and the ``window``
        column of ``GROUP BY window(...)``), a single relation of unknown schema, enclosing scopes.
        """
        key = name.lower()
        display = display or name
        if self.prefer_alias and key in self.aliases:
            return self.aliases[key]
        if key in self.using:
            return self.using[key]
        rels = list(self.rels.values())
        probes = [r.probe(name) for r in rels]
        has = [r for r, p in zip(rels, probes, strict=True) if p == HAS]
        if len(has) == 1:
            return has[0].lookup(name)
        if len(has) > 1:
            names = ", ".join(sorted(r.alias for r in has))
            self.warn(f"ambiguous column '{display}': present in {names}")
            return None
        if key in self.aliases:
            return self.aliases[key]
        maybe = [r for r, p in zip(rels, probes, strict=True) if p == MAYBE]
        if len(maybe) == 1:
            if len(rels) > 1:
                self.warn(
                    f"column '{display}' attributed to '{maybe[0].alias}', the only relation in scope "
                    "whose columns are unknown"
                )
            return maybe[0].lookup(name)
        if len(maybe) > 1:
            names = ", ".join(sorted(r.alias for r in maybe))
            self.warn(f"cannot attribute column '{display}': it may come from any of {names} (unknown schemas)")
            return None
        if self.parent is not None:
            return self.parent.resolve(name, display)
        where = ", ".join(sorted(r.alias for r in rels)) or "no relation"
        self.warn(f"column '{display}' not found in {where}")
        return None
