"""Spark SQL for a test's assertions: ONE aggregate statement per test, plus per-assertion predicates.

A test's cost is dominated by scanning its relation, so every assertion contributes columns to a
single ``SELECT count(*) AS total, <aggregates...> FROM rel`` (``count_if`` for row-level rules,
``count(DISTINCT)`` for uniqueness, a LEFT JOIN against a distinct key set for relationships, scalar
subqueries for custom queries). Failing-row samples are fetched afterwards, only for assertions that
failed, with ``SELECT * FROM rel WHERE <violation predicate> LIMIT n``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, Literal

from sqlglot import exp

from ..compile.render import RenderError, render_sql
from ..spec.envvars import EnvResolver
from ..sql import parse_query
from .assertions import (
    AcceptedValues,
    CustomSql,
    Distribution,
    ExpressionIsTrue,
    NotNull,
    ParsedAssertion,
    Range,
    Relationships,
    RowCount,
    Unique,
)

Resolve = Callable[[str, str], str]  # (kind: "model" | "source", name) -> relation identifier
Kind = Literal["rows", "aggregate", "schema", "progress"]
ROW = "`__t`"  # alias of the tested relation in every statement
_THIS = "__streamt_this__"


def ident(column: str) -> str:
    """Backquote a column name; dots address nested struct fields (``payload.id``)."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in column.split("."))


def literal(value: Any) -> str:
    """A Spark SQL literal for a YAML scalar (strings escaped; YAML dates become DATE/TIMESTAMP)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be compared in SQL")
        return repr(value)
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def as_text(value: Any) -> str:
    """How Spark's CAST(x AS STRING) spells a YAML scalar, for quoted accepted_values."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class AssertionSql:
    """How one assertion is evaluated. ``aggregates`` are (alias, expression) columns of the test's
    single statement; ``violation_predicate`` is true for a failing row of the relation."""

    assertion: ParsedAssertion
    kind: Kind
    description: str
    aggregates: tuple[tuple[str, str], ...] = ()
    joins: tuple[str, ...] = ()
    violation_predicate: str | None = None
    sample_from: str | None = None  # a query whose rows ARE the violations (custom_sql `sql:`)
    sql: str = ""  # standalone statement computing just this assertion's values
    error: str | None = None  # could not be built (bad template...): reported, never skipped

    def alias(self, key: str) -> str:
        return f"a{self.assertion.index}_{key}"


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


def _statement(relation: str, aggregates: list[tuple[str, str]], joins: list[str]) -> str:
    cols = ",\n  ".join(["count(*) AS total", *(f"{expr} AS {alias}" for alias, expr in aggregates)])
    tail = "".join(f"\n{j}" for j in joins)
    return f"SELECT\n  {cols}\nFROM {relation} AS {ROW}{tail}"


class _Builder:
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

    def build(self, a: ParsedAssertion) -> AssertionSql:
        p = a.params
        method = getattr(self, f"_{a.name}", None)
        if method is None:
            kind: Kind = "progress" if a.name in ("max_lag", "throughput") else "schema"
            return AssertionSql(a, kind, describe(a))
        try:
            built: AssertionSql = method(a, p)
        except (RenderError, ValueError) as exc:
            return AssertionSql(a, "aggregate", describe(a), error=f"{a.written}: {exc}")
        if not built.aggregates and a.name != "row_count":
            return built
        return replace(built, sql=_statement(self.relation, list(built.aggregates), list(built.joins)))

    def _counted(self, a: ParsedAssertion, predicate: str, **extra: Any) -> AssertionSql:
        aggs = ((f"a{a.index}_failing", f"count_if({predicate})"), *extra.pop("aggregates", ()))
        return AssertionSql(a, "rows", describe(a), aggregates=aggs, violation_predicate=predicate, **extra)

    def _not_null(self, a: ParsedAssertion, p: NotNull) -> AssertionSql:
        preds = [f"{ident(c)} IS NULL" for c in p.columns]
        per_column = tuple((f"a{a.index}_null_{i}", f"count_if({pred})") for i, pred in enumerate(preds))
        return self._counted(a, " OR ".join(preds) if len(preds) == 1 else f"({' OR '.join(preds)})",
                             aggregates=per_column if len(preds) > 1 else ())

    def _unique(self, a: ParsedAssertion, p: Unique) -> AssertionSql:
        cols = [ident(c) for c in p.keys]
        keyed = " AND ".join(f"{c} IS NOT NULL" for c in cols)
        tup = cols[0] if len(cols) == 1 else f"({', '.join(cols)})"
        dupes = (f"{tup} IN (SELECT {', '.join(cols)} FROM {self.relation} AS `__u` WHERE {keyed} "
                 f"GROUP BY {', '.join(cols)} HAVING count(*) > 1)")
        aggs = ((f"a{a.index}_keyed", f"count_if({keyed})"),
                (f"a{a.index}_distinct", f"count(DISTINCT {', '.join(cols)})"))
        return AssertionSql(a, "rows", describe(a), aggregates=aggs, violation_predicate=dupes)

    def _accepted_values(self, a: ParsedAssertion, p: AcceptedValues) -> AssertionSql:
        col = ident(p.column)
        if p.quote:  # compare as text, so `values: [1, 2]` also matches a string column holding '1'
            values = ", ".join(literal(as_text(v)) for v in p.values)
            pred = f"{col} IS NOT NULL AND CAST({col} AS STRING) NOT IN ({values})"
        else:
            pred = f"{col} IS NOT NULL AND {col} NOT IN ({', '.join(literal(v) for v in p.values)})"
        return self._counted(a, f"({pred})")

    def _range(self, a: ParsedAssertion, p: Range) -> AssertionSql:
        col = ident(p.column)
        lo, hi = ("<", ">") if p.inclusive else ("<=", ">=")
        outside = [f"{col} {lo} {literal(p.min)}"] if p.min is not None else []
        outside += [f"{col} {hi} {literal(p.max)}"] if p.max is not None else []
        return self._counted(a, f"({col} IS NOT NULL AND ({' OR '.join(outside)}))")

    def _relationships(self, a: ParsedAssertion, p: Relationships) -> AssertionSql:
        kind, name = p.target
        target = self.resolve(kind, name)
        col, key, r = f"{ROW}.{ident(p.column)}", ident(p.target_field), f"`__r{a.index}`"
        k = f"`__k{a.index}`"
        join = (f"LEFT JOIN (SELECT DISTINCT {key} AS {k} FROM {target} WHERE {key} IS NOT NULL) AS {r} "
                f"ON {col} = {r}.{k}")
        missing = f"({col} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {target} AS `__ref` WHERE `__ref`.{key} = {col}))"
        aggs = ((f"a{a.index}_failing", f"count_if({col} IS NOT NULL AND {r}.{k} IS NULL)"),
                (f"a{a.index}_nonnull", f"count_if({col} IS NOT NULL)"))
        return AssertionSql(a, "rows", describe(a), aggregates=aggs, joins=(join,), violation_predicate=missing)

    def _row_count(self, a: ParsedAssertion, p: RowCount) -> AssertionSql:
        return AssertionSql(a, "aggregate", describe(a))

    def _freshness(self, a: ParsedAssertion, p: Any) -> AssertionSql:
        agg = (f"a{a.index}_latest", f"unix_micros(CAST(max({ident(p.column)}) AS TIMESTAMP))")
        return AssertionSql(a, "aggregate", describe(a), aggregates=(agg,))

    def _custom_sql(self, a: ParsedAssertion, p: CustomSql) -> AssertionSql:
        if p.where is not None:
            return self._counted(a, f"({p.where})")
        query = self.render(p.sql or "")
        if is_count_query(query):
            return AssertionSql(a, "aggregate", describe(a), aggregates=((f"a{a.index}_value", f"({query})"),))
        value = f"(SELECT count(*) FROM ({query}) AS `__q`)"
        return AssertionSql(a, "aggregate", describe(a), aggregates=((f"a{a.index}_value", value),), sample_from=query)

    def _expression_is_true(self, a: ParsedAssertion, p: ExpressionIsTrue) -> AssertionSql:
        return self._counted(a, f"(NOT coalesce(({p.expression}), false))")

    def _distribution(self, a: ParsedAssertion, p: Distribution) -> AssertionSql:
        col = ident(p.column)
        aggs = [(f"a{a.index}_nonnull", f"count({col})")]
        for j, b in enumerate(p.buckets):
            if b.value is not None:
                pred = f"{col} = {literal(b.value)}"
            else:
                parts = [f"{col} >= {literal(b.min)}"] if b.min is not None else []
                parts += [f"{col} < {literal(b.max)}"] if b.max is not None else []
                pred = " AND ".join(parts)
            aggs.append((f"a{a.index}_bucket_{j}", f"count_if({pred})"))
        return AssertionSql(a, "aggregate", describe(a), aggregates=tuple(aggs))


def is_count_query(query: str) -> bool:
    """Does ``query`` return one aggregate value (``SELECT count(*) FROM ...``) rather than rows?"""
    tree = parse_query(query).tree
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or tree.args.get("group"):
        return False
    projection = tree.expressions[0]
    projection = projection.this if isinstance(projection, exp.Alias) else projection
    return isinstance(projection, exp.AggFunc)


def _pct(x: float) -> str:
    return f"{x * 100:g}%"


def describe(a: ParsedAssertion) -> str:
    """One human sentence saying what the assertion requires (used as the check description)."""
    p: Any = a.params
    match a.name:
        case "not_null":
            return f"not_null: {', '.join(p.columns)} never null"
        case "unique":
            tol = f" (up to {_pct(p.tolerance)} duplicate rows allowed)" if p.tolerance else ""
            return f"unique: no two rows share ({', '.join(p.keys)}){tol}"
        case "accepted_values":
            how = "" if p.quote else " (unquoted)"
            return f"accepted_values: {p.column} in {p.values!r}{how}"
        case "range":
            lo, hi = ("<=", "<=") if p.inclusive else ("<", "<")
            left = f"{p.min} {lo} " if p.min is not None else ""
            right = f" {hi} {p.max}" if p.max is not None else ""
            return f"range: {left}{p.column}{right}"
        case "accepted_types":
            return "accepted_types: " + ", ".join(f"{c} is {t}" for c, t in p.types.items())
        case "relationships":
            kind, name = p.target
            rate = f" (at least {_pct(p.match_rate)} of rows)" if p.match_rate < 1 else ""
            fn = "ref" if kind == "model" else "source"
            return f"relationships: every {p.column} exists in {fn}(\"{name}\").{p.target_field}{rate}"
        case "row_count":
            low, high = p.min if p.min is not None else 0, p.max if p.max is not None else "any"
            return f"row_count: between {low} and {high} rows"
        case "freshness":
            return f"freshness: newest {p.column} at most {p.max_age} old"
        case "custom_sql":
            if p.where is not None:
                return f"custom_sql: no row where {p.where.strip()}"
            if p.max_failures is not None:
                return f"custom_sql: query returns at most {p.max_failures} failures"
            return f"custom_sql: query returns {p.expected} (row count or value)"
        case "expression_is_true":
            return f"expression_is_true: {p.expression.strip()} for every row"
        case "distribution":
            return f"distribution: {p.column} matches {len(p.buckets)} bucket ratio(s) within {_pct(p.tolerance)}"
        case "max_lag":
            return f"max_lag: event time {p.column} at most {p.max_seconds:g}s behind processing time"
        case "throughput":
            bounds = [f">= {p.low:g}" if p.low is not None else "", f"<= {p.high:g}" if p.high is not None else ""]
            return f"throughput: rows/second {' and '.join(b for b in bounds if b)}"
    return a.name


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
    return TestSql(rel, built, _statement(rel, aggregates, joins))


__all__ = ["AssertionSql", "TestSql", "build_test_sql", "describe", "ident", "is_count_query", "literal"]
