"""Parsing compiled Spark SQL for column lineage, with a workaround for Spark's ``window()``.

sqlglot's spark dialect treats ``WINDOW`` as the named-window clause keyword, so the structured
streaming call ``GROUP BY window(ts, '1 hour')`` fails with "Expecting )". We rename the *call*
token (``WINDOW`` directly followed by ``(``) to a placeholder function name by editing the source
text at the token's offsets, so string literals and quoted identifiers are never touched.
"""

from __future__ import annotations

import re
from itertools import pairwise

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import TokenType

WINDOW_PLACEHOLDER = "streamt_window_fn"
SPARK_TIME_WINDOW_FUNCS = {"window": "window", WINDOW_PLACEHOLDER: "window", "session_window": "session_window"}

_DIALECT = Spark()
_WINDOW_CALL = re.compile(r"\bwindow\s*\(", re.IGNORECASE)


def rewrite_window_calls(sql: str) -> str:
    """Return ``sql`` with each ``window(`` call renamed to :data:`WINDOW_PLACEHOLDER`."""
    if not _WINDOW_CALL.search(sql):
        return sql
    tokens = _DIALECT.tokenize(sql)
    spans: list[tuple[int, int]] = []
    for tok, nxt in pairwise(tokens):
        if tok.token_type == TokenType.WINDOW and nxt.token_type == TokenType.L_PAREN:
            spans.append((tok.start, tok.end + 1))
    if not spans:
        return sql
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(sql[pos:start])
        out.append(WINDOW_PLACEHOLDER)
        pos = end
    out.append(sql[pos:])
    return "".join(out)


def parse_query(sql: str) -> exp.Expr:
    """Parse one Spark SQL query; raises ``ValueError`` with a short reason when it cannot.

    Tries the text as written first and falls back to the ``window(`` rewrite, so a query that
    already parses is never altered.
    """
    try:
        statements = _DIALECT.parse(sql)
    except Exception as first_error:
        try:
            rewritten = rewrite_window_calls(sql)
        except Exception:  # the tokenizer fails too (e.g. unterminated string): report the parse error
            rewritten = sql
        if rewritten == sql:
            raise ValueError(_short(first_error)) from None
        try:
            statements = _DIALECT.parse(rewritten)
        except Exception as second_error:
            raise ValueError(_short(second_error)) from None
    found = [s for s in statements if s is not None]
    if len(found) != 1:
        raise ValueError(f"expected exactly one statement, found {len(found)}")
    query = found[0]
    if not isinstance(query, exp.Query):
        raise ValueError(f"expected a SELECT query, found {query.key.upper()}")
    return query


def _short(error: Exception) -> str:
    """First line of a sqlglot error, without the ANSI-highlighted SQL excerpt."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:200]
