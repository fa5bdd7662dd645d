"""Parse one model's (rendered) SQL into a sqlglot tree: the single parser every layer uses.

Spark SQL and the Flink SQL of streamt projects go through the same path: :mod:`.normalize`,
then sqlglot's Spark dialect, then the real names back. Errors come back with the line of the SQL
text they concern, never as exceptions. Parses are memoized by text, so compile, validation and
lineage in one process parse a model once; callers must not mutate the returned tree (copy it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from .normalize import Untranslatable, normalize, restore

DIALECT = "spark"


@dataclass(frozen=True)
class ParsedQuery:
    tree: exp.Query | None
    error: str | None = None
    line: int = 0  # 1-based line of ``error`` within the SQL text
    problems: tuple[Untranslatable, ...] = ()  # constructs Spark cannot run (the tree may still exist)


@lru_cache(maxsize=8192)
def parse_query(sql: str) -> ParsedQuery:
    """Parse exactly one query (SELECT/WITH/set operation). Never raises."""
    norm = normalize(sql)
    try:
        statements = [s for s in sqlglot.parse(norm.text, read=DIALECT) if s is not None]
    except (ParseError, TokenError) as exc:
        first = norm.problems[0] if norm.problems else None
        if first is not None:  # e.g. MATCH_RECOGNIZE: say what it is, not "Expecting )"
            return ParsedQuery(None, f"{first.construct} has no Spark equivalent", first.line, norm.problems)
        return ParsedQuery(None, _message(exc), _line(exc))
    except RecursionError:
        return ParsedQuery(None, "SQL is nested too deeply to analyze", 1)
    if not statements:
        return ParsedQuery(None, "the SQL is empty", 1)
    if len(statements) > 1:
        return ParsedQuery(None, f"expected one SELECT statement, found {len(statements)} statements", 1)
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        return ParsedQuery(None, f"a model must be a query (SELECT/WITH), got {tree.key.upper()}", 1)
    restore(tree)
    return ParsedQuery(tree, problems=norm.problems)


def parse_expression(text: str) -> str | None:
    """Check a SQL expression or query written in a test (``where:``, ``expression:``, ``sql:``);
    the first line of the error, or None when it parses."""
    norm = normalize(text)
    try:
        sqlglot.parse_one(norm.text, read=DIALECT)
    except (ParseError, TokenError) as exc:
        return _message(exc)
    except RecursionError:
        return "SQL is nested too deeply to analyze"
    return None


def _message(exc: Exception) -> str:
    if isinstance(exc, ParseError) and exc.errors:
        e = exc.errors[0]
        near = (e.get("highlight") or "").strip()
        desc = str(e.get("description", "syntax error"))
        return f"{desc}" + (f" near {near!r}" if near else "") + (f" (column {e.get('col')})" if e.get("col") else "")
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _line(exc: Exception) -> int:
    if isinstance(exc, ParseError) and exc.errors:
        return int(exc.errors[0].get("line") or 1)
    return 1


def output_columns(tree: exp.Expr) -> tuple[str, ...] | None:
    """Names of the query's output columns; None when a star hides them."""
    query = tree
    while isinstance(query, exp.SetOperation):
        query = query.this
    if isinstance(query, exp.Subquery):
        query = query.unnest()
    if not isinstance(query, exp.Select):
        return None
    names: list[str] = []
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and projection.is_star):
            return None
        name = projection.alias_or_name
        if not name:
            return None
        names.append(name)
    return tuple(names)
