"""Parse rendered Spark SQL with sqlglot: syntax errors with lines, and output column names.

sqlglot's spark dialect rejects some SQL that Spark accepts (``GROUP BY window(ts, '1 hour')``).
We never reject such a model: a token-level rewrite renames the offending function calls and we
parse again; the rewrite only affects analysis, never the SQL that Spark runs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

DIALECT = "spark"
# Spark time-window functions that sqlglot confuses with the WINDOW clause keyword.
_WINDOW_FUNCS = {"window": "__streamt_window", "session_window": "__streamt_session_window"}


@dataclass
class ParsedSQL:
    tree: exp.Expression | None
    error: str | None = None
    line: int = 0  # 1-based line of the error within the SQL text
    rewritten: bool = False


def _rewrite_window_calls(sql: str) -> str | None:
    """Rename ``window(`` / ``session_window(`` calls using token positions; None if none found."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(DIALECT).tokenize(sql)
    except TokenError:
        return None
    edits: list[tuple[int, int, str]] = []
    for tok, nxt in itertools.pairwise(tokens):
        name = tok.text.lower()
        if name in _WINDOW_FUNCS and nxt.token_type == TokenType.L_PAREN:
            edits.append((tok.start, tok.end + 1, _WINDOW_FUNCS[name]))
    if not edits:
        return None
    out = sql
    for start, end, repl in reversed(edits):
        out = out[:start] + repl + out[end:]
    return out


def parse_sql(sql: str) -> ParsedSQL:
    """Parse one statement. Never raises."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except (ParseError, TokenError) as exc:
        rewritten = _rewrite_window_calls(sql)
        if rewritten is not None:
            try:
                again = [s for s in sqlglot.parse(rewritten, read=DIALECT) if s is not None]
                if len(again) == 1:
                    return ParsedSQL(tree=again[0], rewritten=True)
            except (ParseError, TokenError):
                pass
        return ParsedSQL(tree=None, error=_message(exc), line=_line(exc))
    except RecursionError:
        return ParsedSQL(tree=None, error="SQL is nested too deeply to analyze", line=1)
    if not statements:
        return ParsedSQL(tree=None, error="the SQL is empty", line=1)
    if len(statements) > 1:
        return ParsedSQL(tree=None, error=f"expected one SELECT statement, found {len(statements)} statements",
                         line=1)
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        return ParsedSQL(tree=None, error=f"a model must be a query (SELECT/WITH), got {tree.key.upper()}",
                         line=1)
    return ParsedSQL(tree=tree)


def _message(exc: Exception) -> str:
    if isinstance(exc, ParseError) and exc.errors:
        e = exc.errors[0]
        near = (e.get("highlight") or "").strip()
        desc = str(e.get("description", "syntax error"))
        return f"{desc}" + (f" near {near!r}" if near else "") + (f" (column {e.get('col')})" if e.get("col") else "")
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _line(exc: Exception) -> int:
    if isinstance(exc, ParseError) and exc.errors:
        return int(exc.errors[0].get("line") or 1)
    return 1


def output_columns(tree: exp.Expression) -> tuple[str, ...] | None:
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
        if name.startswith("__streamt_"):
            name = name.removeprefix("__streamt_")
        names.append(name)
    return tuple(names)


ParseSummary = tuple[tuple[str, ...] | None, str | None, int, bool]  # columns, error, error line, rewritten


def summarize(sql: str) -> ParseSummary:
    """What the compiler keeps from a parse: small, picklable, cacheable by SQL hash."""
    parsed = parse_sql(sql)
    if parsed.tree is None:
        return None, parsed.error, parsed.line, False
    return output_columns(parsed.tree), None, 0, parsed.rewritten


def summarize_many(sqls: list[str]) -> list[ParseSummary]:
    return [summarize(s) for s in sqls]
