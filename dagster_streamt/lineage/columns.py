"""Static column-level lineage of a project's compiled Spark SQL.

Entry point: :func:`analyze_columns`. Models are walked in topological order so that ``SELECT *``
over an upstream model expands to the columns computed for it; each model is parsed once and
walked once (see :mod:`column_walk`), which keeps 10k models well under a minute. Nothing here
imports dagster or pyspark: the CLI calls this directly.

Problems never raise: a model that cannot be parsed or analyzed gets a warning and, if declared,
its declared columns without edges.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

import sqlglot

from dagster_streamt.lineage.column_scope import DerivedRel, Edges
from dagster_streamt.lineage.column_types import (
    FORMAT_VERSION,
    ColumnEdge,
    ColumnRef,
    LineageHit,
    LineageStep,
    ModelColumnLineage,
    ProjectColumnLineage,
)
from dagster_streamt.lineage.column_walk import ModelWalker
from dagster_streamt.sql import parse_query

__all__ = [
    "ColumnEdge",
    "ColumnRef",
    "LineageHit",
    "LineageStep",
    "ModelColumnLineage",
    "ProjectColumnLineage",
    "analyze_columns",
    "lineage_cache_key",
]

ANALYZER_VERSION = "1"  # bump when the analysis changes, to invalidate cached results


class _Catalog:
    """Models and sources in one namespace; exact name first, then case-insensitive (Spark)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.exact = {n: n for n in names}
        self.lower: dict[str, str] = {}
        for n in names:
            self.lower.setdefault(n.lower(), n)
        self.schemas: dict[str, list[str] | None] = {}

    def __call__(self, name: str) -> tuple[str, list[str] | None] | None:
        canonical = self.exact.get(name) or self.lower.get(name.lower())
        if canonical is None:
            return None
        return canonical, self.schemas.get(canonical)


def analyze_columns(
    models: Mapping[str, str | None],
    order: Sequence[str],
    source_schemas: Mapping[str, Sequence[str]],
    declared_columns: Mapping[str, Sequence[str]] | None = None,
) -> ProjectColumnLineage:
    """Column lineage of every model in ``models`` (name -> compiled Spark SQL).

    ``order`` is upstream-first; models missing from it are analyzed last (name order) with a
    warning. ``source_schemas`` gives declared source columns (empty = unknown) and
    ``declared_columns`` the declared output columns of models, used when the SQL cannot tell.
    """
    declared = dict(declared_columns or {})
    catalog = _Catalog([*models, *(s for s in source_schemas if s not in models)])
    for name, cols in [*source_schemas.items(), *((n, declared.get(n)) for n in models)]:  # a model wins
        catalog.schemas[name] = list(cols or ()) or None

    sequence = list(dict.fromkeys(n for n in order if n in models))
    listed = set(sequence)
    late = sorted(n for n in models if n not in listed)
    results: dict[str, ModelColumnLineage] = {}
    for name in [*sequence, *late]:
        lineage, schema = _analyze_model(name, models[name], catalog, declared.get(name))
        if name in late:
            warning = f"{name}: model is not in the topological order; analyzed last"
            lineage = replace(lineage, warnings=(*lineage.warnings, warning))
        results[name] = lineage
        catalog.schemas[name] = schema
    return ProjectColumnLineage({k: results[k] for k in sorted(results)})


def _analyze_model(
    name: str, sql: str | None, catalog: _Catalog, declared: Sequence[str] | None
) -> tuple[ModelColumnLineage, list[str] | None]:
    """Lineage of one model, plus the column list downstream models should see (None = unknown)."""
    declared_list = list(declared or [])
    walker = ModelWalker(name, catalog)
    rel: DerivedRel | None = None
    parsed = parse_query(sql) if isinstance(sql, str) else None
    if parsed is None:
        problem = "model has no SQL"
    elif parsed.tree is None:
        problem = f"could not parse SQL ({parsed.error})"
    else:
        try:
            rel = walker.query(parsed.tree, None, {})
        except RecursionError:
            problem = "query is nested too deeply to analyze"
        except Exception as exc:  # never raise on user SQL: report and continue with the project
            problem = f"internal error analyzing columns ({type(exc).__name__}: {exc})"
    if rel is None:
        walker.warn(f"{problem}; column lineage unknown")
        fallback = ModelColumnLineage(name, tuple(declared_list), {c: () for c in declared_list}, (),
                                      tuple(walker.warnings))
        return fallback, declared_list or None

    fields: dict[str, Edges] = {}
    columns: list[str]
    if rel.columns is not None:
        columns = []
        for col, edges in rel.items:
            if col in fields:
                walker.warn(f"duplicate output column '{col}': lineage of both is merged")
                fields[col] = fields[col] | edges
                continue
            columns.append(col)
            fields[col] = edges
        produced = {c.lower() for c in columns}
        for col in declared_list:
            if col.lower() not in produced:
                walker.warn(f"declared column '{col}' is not in the SELECT output")
        schema: list[str] | None = columns
    elif declared_list:
        columns = declared_list
        for col in columns:
            found = rel.lookup(col)
            if found is None:
                walker.warn(f"declared column '{col}' cannot be traced through SELECT *")
            fields[col] = found or frozenset()
        schema = columns
    else:
        columns = list(dict.fromkeys(n for n, _ in rel.items))
        fields = {c: rel.lookup(c) or frozenset() for c in columns}
        walker.warn(
            "output columns are not fully known (SELECT * over a relation with unknown columns); "
            "declare the model's columns to fix"
        )
        schema = None
    if not columns and rel.columns is not None:
        walker.warn("query selects no columns")
    for col in columns:
        if col in walker.approximated:
            walker.warn(f"unaliased expression {col!r}: output column name approximated; add an alias")
    lineage = ModelColumnLineage(
        model=name,
        columns=tuple(columns),
        fields={c: _edges(fields[c]) for c in columns},
        dataset=_edges(rel.dataset),
        warnings=tuple(walker.warnings),
    )
    return lineage, schema


def _edges(edges: Edges) -> tuple[ColumnEdge, ...]:
    return tuple(ColumnEdge(ColumnRef(r, c), t, s) for r, c, t, s in sorted(edges))  # type: ignore[arg-type]


def lineage_cache_key(
    models: Mapping[str, str | None],
    source_schemas: Mapping[str, Sequence[str]],
    declared_columns: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """sha256 over everything the analysis depends on, for caching ``ProjectColumnLineage.to_dict``.

    Includes the analyzer and sqlglot versions since a parser upgrade can change results.
    """
    payload = {
        "analyzer": ANALYZER_VERSION,
        "format": FORMAT_VERSION,
        "sqlglot": sqlglot.__version__,
        "models": dict(sorted(models.items())),
        "sources": {k: list(v) for k, v in sorted(source_schemas.items())},
        "declared": {k: list(v) for k, v in sorted((declared_columns or {}).items())},
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
