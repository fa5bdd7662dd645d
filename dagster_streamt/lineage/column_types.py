"""Result types of static column-level lineage, plus cross-model traversal.

Kept free of sqlglot so that a cached result (``from_dict``) can be loaded and walked without paying
for the SQL parser import. Vocabulary follows the OpenLineage column-lineage facet
(``DIRECT``/``INDIRECT`` with a subtype) so that the edges can be emitted as-is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

EdgeType = Literal["DIRECT", "INDIRECT"]
DirectSubtype = Literal["IDENTITY", "TRANSFORMATION", "AGGREGATION"]
IndirectSubtype = Literal["JOIN", "FILTER", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"]
EdgeSubtype = DirectSubtype | IndirectSubtype

DIRECT_SUBTYPES: tuple[str, ...] = get_args(DirectSubtype)
INDIRECT_SUBTYPES: tuple[str, ...] = get_args(IndirectSubtype)
FORMAT_VERSION = 1


@dataclass(frozen=True, order=True)
class ColumnRef:
    """A column of a relation; ``relation`` is a model or source name (one namespace)."""

    relation: str
    column: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.relation}.{self.column}"


@dataclass(frozen=True, order=True)
class ColumnEdge:
    """One input of an output column (or of the whole dataset) and how it is used."""

    source: ColumnRef
    type: EdgeType
    subtype: EdgeSubtype

    def to_dict(self) -> dict[str, str]:
        return {**self.source.to_dict(), "type": self.type, "subtype": self.subtype}

    @classmethod
    def from_dict(cls, data: Mapping[str, str]) -> ColumnEdge:
        return cls(ColumnRef(data["relation"], data["column"]), data["type"], data["subtype"])  # type: ignore[arg-type]


@dataclass(frozen=True)
class ModelColumnLineage:
    """Lineage of one model: per-column edges and dataset-wide (row-affecting) edges.

    ``fields`` holds DIRECT edges and column-specific INDIRECT ones (CASE conditions, window
    partition/order); ``dataset`` holds the INDIRECT inputs that affect every column (joins, filters,
    grouping, sorting). Edges point one hop upstream: at a model or a source, never at a CTE.
    """

    model: str
    columns: tuple[str, ...]
    fields: dict[str, tuple[ColumnEdge, ...]]
    dataset: tuple[ColumnEdge, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "columns": list(self.columns),
            "fields": {k: [e.to_dict() for e in self.fields[k]] for k in sorted(self.fields)},
            "dataset": [e.to_dict() for e in self.dataset],
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelColumnLineage:
        return cls(
            model=data["model"],
            columns=tuple(data["columns"]),
            fields={k: tuple(ColumnEdge.from_dict(e) for e in v) for k, v in data["fields"].items()},
            dataset=tuple(ColumnEdge.from_dict(e) for e in data["dataset"]),
            warnings=tuple(data["warnings"]),
        )


@dataclass(frozen=True, order=True)
class LineageStep:
    """One hop of a traversal: ``downstream`` column is computed from ``upstream`` column."""

    downstream: ColumnRef
    upstream: ColumnRef
    type: EdgeType
    subtype: EdgeSubtype

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, order=True)
class LineageHit:
    """A column reached by a traversal, with one shortest path (from the queried column outward)."""

    depth: int
    ref: ColumnRef
    path: tuple[LineageStep, ...]

    @property
    def type(self) -> EdgeType:
        """DIRECT only when every hop of ``path`` is DIRECT (the value flows through)."""
        return "DIRECT" if all(s.type == "DIRECT" for s in self.path) else "INDIRECT"

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.ref.to_dict(),
            "depth": self.depth,
            "type": self.type,
            "path": [s.to_dict() for s in self.path],
        }


_Adjacency = dict[ColumnRef, list[tuple[ColumnRef, str, str]]]


@dataclass(frozen=True)
class ProjectColumnLineage:
    """Column lineage of every model; ``upstream``/``downstream`` walk across models."""

    models: dict[str, ModelColumnLineage]
    _reverse: dict[bool, _Adjacency] = field(default_factory=dict, init=False, repr=False, compare=False)

    def warnings(self) -> list[str]:
        return [w for name in sorted(self.models) for w in self.models[name].warnings]

    def _edges_of(self, ref: ColumnRef, include_dataset: bool) -> Iterable[ColumnEdge]:
        model = self.models.get(ref.relation)
        if model is None or ref.column not in model.fields:
            return ()
        edges = model.fields[ref.column]
        return sorted({*edges, *model.dataset}) if include_dataset else edges

    def _reverse_index(self, include_dataset: bool) -> _Adjacency:
        """Built on first ``downstream`` call: edges are stored upstream-pointing only."""
        if include_dataset in self._reverse:
            return self._reverse[include_dataset]
        rev: _Adjacency = {}
        for name in sorted(self.models):
            m = self.models[name]
            for col in sorted(m.fields):
                target = ColumnRef(name, col)
                for e in self._edges_of(target, include_dataset):
                    rev.setdefault(e.source, []).append((target, e.type, e.subtype))
        for lst in rev.values():
            lst.sort()
        self._reverse[include_dataset] = rev
        return rev

    def upstream(
        self, model: str, column: str, *, direct_only: bool = False, include_dataset: bool = False
    ) -> list[LineageHit]:
        """All columns ``model.column`` transitively depends on, nearest first.

        ``direct_only`` follows only DIRECT edges (where the value comes from); ``include_dataset``
        also follows the model-wide JOIN/FILTER/GROUP_BY/SORT inputs of every model on the way.
        """

        def step(ref: ColumnRef) -> list[tuple[ColumnRef, LineageStep]]:
            edges = self._edges_of(ref, include_dataset)
            return [(e.source, LineageStep(ref, e.source, e.type, e.subtype)) for e in edges]

        return _bfs(ColumnRef(model, column), step, direct_only)

    def downstream(
        self, model: str, column: str, *, direct_only: bool = False, include_dataset: bool = False
    ) -> list[LineageHit]:
        """All model columns that transitively depend on ``model.column`` (model or source)."""
        rev = self._reverse_index(include_dataset)

        def step(ref: ColumnRef) -> list[tuple[ColumnRef, LineageStep]]:
            return [(tgt, LineageStep(tgt, ref, t, s)) for tgt, t, s in rev.get(ref, ())]  # type: ignore[arg-type]

        return _bfs(ColumnRef(model, column), step, direct_only)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "models": {k: self.models[k].to_dict() for k in sorted(self.models)},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProjectColumnLineage:
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"unsupported column lineage format {data.get('format')!r}")
        return cls({k: ModelColumnLineage.from_dict(v) for k, v in sorted(data["models"].items())})


def _bfs(start: ColumnRef, step: Any, direct_only: bool) -> list[LineageHit]:
    """Breadth-first walk; one hit per reached column with the first (shortest) path found
    (``direct_only``: along DIRECT steps only).

    Neighbours are visited in sorted order so that the chosen path is deterministic.
    """
    seen = {start}
    hits: list[LineageHit] = []
    queue: deque[tuple[ColumnRef, tuple[LineageStep, ...]]] = deque([(start, ())])
    while queue:
        ref, path = queue.popleft()
        for nxt, st in sorted(step(ref), key=lambda p: (p[0], p[1])):
            if nxt in seen or (direct_only and st.type != "DIRECT"):
                continue
            seen.add(nxt)
            new_path = (*path, st)
            hits.append(LineageHit(len(new_path), nxt, new_path))
            queue.append((nxt, new_path))
    hits.sort(key=lambda h: (h.depth, h.ref))
    return hits
