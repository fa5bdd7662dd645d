"""The pieces of a test's Spark SQL: what one assertion contributes (quoting and literals: sql.identifiers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal, Protocol

from .parsed import ParsedAssertion

Resolve = Callable[[str, str], str]  # (kind: "model" | "source", name) -> relation identifier
Kind = Literal["rows", "aggregate", "schema", "progress"]
ROW = "`__t`"  # alias of the tested relation in every statement


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


class SqlContext(Protocol):
    """What an assertion kind may use to build its SQL (implemented by the test's SQL builder)."""

    relation: str  # the tested rows (maybe sampled), as a FROM expression

    def resolve(self, kind: str, name: str) -> str: ...

    def render(self, template: str) -> str: ...

    def counted(self, a: ParsedAssertion, predicate: str, description: str, *,
                aggregates: tuple[tuple[str, str], ...] = ()) -> AssertionSql: ...


def statement(relation: str, aggregates: list[tuple[str, str]], joins: list[str]) -> str:
    cols = ",\n  ".join(["count(*) AS total", *(f"{expr} AS {alias}" for alias, expr in aggregates)])
    tail = "".join(f"\n{j}" for j in joins)
    return f"SELECT\n  {cols}\nFROM {relation} AS {ROW}{tail}"
