"""Spark SQL for a test's assertions: ONE aggregate statement per test, plus per-assertion predicates.

A test's cost is dominated by scanning its relation, so every assertion contributes columns to a
single ``SELECT count(*) AS total, <aggregates...> FROM rel`` (``count_if`` for row-level rules,
``count(DISTINCT)`` for uniqueness, a LEFT JOIN against a distinct key set for relationships, scalar
subqueries for custom queries). Failing-row samples are fetched afterwards, only for assertions that
failed, with ``SELECT * FROM rel WHERE <violation predicate> LIMIT n``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..compile.render import RenderError, render_sql
from ..spec.envvars import EnvResolver
from ..sql.identifiers import literal
from ..sql.identifiers import quote_path as ident
from .kinds import KINDS
from .parsed import ParsedAssertion
from .sql_text import ROW, AssertionSql, Resolve, as_text, statement

_THIS = "__streamt_this__"


@dataclass(frozen=True)
class TestSql:
    relation: str  # the FROM expression, e.g. `orders` or (SELECT * FROM `orders` LIMIT 100)
    assertions: tuple[AssertionSql, ...]
    statement: str  # the ONE aggregate statement for the whole test

    __test__ = False  # not a pytest test class

    def sample_query(self, a: AssertionSql, limit: int) -> str | None:
        """Query for up to ``limit`` failing rows of ``a``; None when rows cannot be singled out."""
        if a.sample_from is not None:
            return f"SELECT * FROM ({a.sample_from}) AS `__q` LIMIT {int(limit)}"
        if a.violation_predicate is None:
            return None
        return f"SELECT {ROW}.* FROM {self.relation} AS {ROW} WHERE {a.violation_predicate} LIMIT {int(limit)}"


class _Builder:
    """The :class:`SqlContext` kinds build their SQL with."""

    def __init__(self, relation: str, resolve: Resolve, target: tuple[str, str] | None,
                 variables: Mapping[str, Any]) -> None:
        self.relation = relation
        self.resolve = resolve
        self.target = target
        self.variables = variables

    def relation_of(self, kind: str, name: str) -> str:
        if (kind == "model" and name == _THIS) or (kind, name) == self.target:
            return self.relation  # the tested rows, sampled or not
        return self.resolve(kind, name)

    def render(self, template: str) -> str:
        """Render ``{{ ref() }}``/``{{ source() }}``/``{{ this }}`` in custom SQL (Jinja, no regex)."""
        result = render_sql(_THIS, template, variables=self.variables, resolver=EnvResolver(),
                            relation=self.relation_of)
        if result.missing_vars or result.unknown_vars:
            raise RenderError(f"unknown variable(s): {', '.join([*result.missing_vars, *result.unknown_vars])}")
        return result.sql.strip().rstrip(";")

    def counted(self, a: ParsedAssertion, predicate: str, description: str, *,
                aggregates: tuple[tuple[str, str], ...] = ()) -> AssertionSql:
        aggs = ((f"a{a.index}_failing", f"count_if({predicate})"), *aggregates)
        return AssertionSql(a, "rows", description, aggregates=aggs, violation_predicate=predicate)

    def build(self, a: ParsedAssertion) -> AssertionSql:
        kind = KINDS[a.name]
        try:
            built = kind.sql(self, a, a.params)
        except (RenderError, ValueError) as exc:
            return AssertionSql(a, "aggregate", describe(a), error=f"{a.written}: {exc}")
        if built is None:  # judged from the schema or from streaming progress, not from rows
            return AssertionSql(a, "progress" if kind.evaluated_from == "progress" else "schema", describe(a))
        return replace(built, sql=statement(self.relation, list(built.aggregates), list(built.joins)))


def describe(a: ParsedAssertion) -> str:
    """One human sentence saying what the assertion requires (used as the check description)."""
    return KINDS[a.name].describe(a.params)


def build_test_sql(assertions: list[ParsedAssertion], relation: str, *, resolve: Resolve | None = None,
                   sample_size: int | None = None, target: tuple[str, str] | None = None,
                   variables: Mapping[str, Any] | None = None) -> TestSql:
    """Build the single aggregate statement for ``assertions`` over ``relation`` (a backquoted name).

    ``sample_size`` tests only the first N rows; ``target`` is the (kind, name) of the tested model or
    source, so custom SQL naming it reads the same (possibly sampled) rows; ``resolve`` maps other
    models and sources to relations (default: their backquoted name, the registered view).
    """
    rel = f"(SELECT * FROM {relation} LIMIT {int(sample_size)})" if sample_size else relation
    builder = _Builder(rel, resolve or (lambda _kind, name: ident(name)), target, variables or {})
    built = tuple(builder.build(a) for a in assertions)
    aggregates = [agg for b in built if b.error is None for agg in b.aggregates]
    joins = [j for b in built if b.error is None for j in b.joins]
    return TestSql(rel, built, statement(rel, aggregates, joins))


__all__ = ["AssertionSql", "TestSql", "as_text", "build_test_sql", "describe", "ident", "literal"]
