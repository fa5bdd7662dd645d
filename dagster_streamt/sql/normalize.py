"""Make Spark and Flink SQL parseable by sqlglot's Spark dialect, at token level.

sqlglot (compiled, so its parser cannot be subclassed) rejects a few things models legitimately
write: Spark's ``GROUP BY window(ts, '1 hour')`` (``WINDOW`` is read as the named-window clause),
Flink's ``SESSION(ts, INTERVAL ...)`` group window (``SESSION`` is a keyword) and window table
functions ``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...))``. Those calls are renamed to placeholders
by editing the text at token offsets (string literals and quoted identifiers are never touched,
and newlines are kept so error lines stay right); :func:`restore` puts the real names back in the
parsed tree. Constructs Spark has no equivalent for are reported with their line.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

PREFIX = "__streamt_"
WINDOW_TVFS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")
# placeholder (upper-cased, as sqlglot stores unknown function names) -> the name the user wrote
_RESTORE = {
    f"{PREFIX}window".upper(): "window",
    f"{PREFIX}session".upper(): "SESSION",
    **{f"{PREFIX}tvf_{k}".upper(): k for k in WINDOW_TVFS},
}
TVF_NAMES = frozenset(WINDOW_TVFS)  # a window TVF keeps its Flink name inside a FROM clause

# Constructs with no Spark equivalent: the nearest Spark way to write each.
UNTRANSLATABLE: dict[str, str] = {
    "MATCH_RECOGNIZE": "Spark has no row pattern matching; write the pattern with window functions "
                       "(LAG/LEAD over PARTITION BY ... ORDER BY ...) or a session_window aggregation",
    "ML_PREDICT": "Spark SQL cannot call a Confluent ML model; score rows in a Python step or with a Spark "
                  "UDF registered in the session, then select from that model",
    "ML_EVALUATE": "Spark SQL cannot call a Confluent ML model; evaluate it outside the pipeline",
}
_DIALECT = Spark()


@dataclass(frozen=True)
class Untranslatable:
    construct: str
    line: int  # 1-based, within the SQL text
    hint: str


@dataclass(frozen=True)
class Normalized:
    text: str
    problems: tuple[Untranslatable, ...] = ()


def _matching_paren(tokens: list[Token], open_index: int) -> int | None:
    depth = 0
    for i in range(open_index, len(tokens)):
        kind = tokens[i].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return i
    return None


def _is_call(tokens: list[Token], i: int) -> bool:
    return i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.L_PAREN


def normalize(sql: str) -> Normalized:
    """Rewrite what sqlglot cannot parse; report what Spark cannot run. Never raises."""
    upper = sql.upper()
    if not any(w in upper for w in ("WINDOW", "SESSION", "TABLE", *UNTRANSLATABLE)):
        return Normalized(sql)
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError:
        return Normalized(sql)  # the parser reports the tokenizer's error with its line
    edits: list[tuple[int, int, str]] = []  # (start, end inclusive, replacement)
    problems: list[Untranslatable] = []
    for i, tok in enumerate(tokens):
        name = tok.text.upper()
        if name in UNTRANSLATABLE and (name == "MATCH_RECOGNIZE" or _is_call(tokens, i)):
            problems.append(Untranslatable(name, tok.line, UNTRANSLATABLE[name]))
        elif tok.token_type == TokenType.WINDOW and _is_call(tokens, i):
            edits.append((tok.start, tok.end, f"{PREFIX}window"))
        elif tok.token_type == TokenType.SESSION and _is_call(tokens, i) and not _in_tvf(tokens, i):
            edits.append((tok.start, tok.end, f"{PREFIX}session"))
        elif tok.token_type == TokenType.TABLE and _is_call(tokens, i) and i + 2 < len(tokens) \
                and tokens[i + 2].text.upper() in WINDOW_TVFS and _is_call(tokens, i + 2):
            edits.extend(_tvf_edits(tokens, i))
    if not edits:
        return Normalized(sql, tuple(problems))
    out = sql
    for start, end, repl in sorted(edits, reverse=True):
        out = out[:start] + repl + out[end + 1:]
    return Normalized(out, tuple(problems))


def _in_tvf(tokens: list[Token], i: int) -> bool:
    """``SESSION`` right after ``TABLE(`` is a window TVF, handled by :func:`_tvf_edits`."""
    return i >= 2 and tokens[i - 1].token_type == TokenType.L_PAREN and tokens[i - 2].token_type == TokenType.TABLE


def _tvf_edits(tokens: list[Token], table_index: int) -> list[tuple[int, int, str]]:
    """``TABLE(TUMBLE(TABLE t, ...))`` -> ``__streamt_tvf_TUMBLE(t, ...)``."""
    outer_open = table_index + 1
    outer_close = _matching_paren(tokens, outer_open)
    func = tokens[table_index + 2]
    inner_close = _matching_paren(tokens, table_index + 3)
    if outer_close is None or inner_close is None:
        return []
    edits = [
        (tokens[table_index].start, tokens[outer_open].end, ""),
        (func.start, func.end, f"{PREFIX}tvf_{func.text.upper()}"),
        (tokens[outer_close].start, tokens[outer_close].end, ""),
    ]
    for j in range(table_index + 4, inner_close):
        if tokens[j].token_type == TokenType.TABLE:
            edits.append((tokens[j].start, tokens[j].end, ""))
    return edits


def restore(tree: exp.Expr) -> exp.Expr:
    """Give placeholder calls their real names back (in place; the tree is freshly parsed)."""
    for node in tree.find_all(exp.Anonymous):
        real = _RESTORE.get(str(node.this).upper())
        if real is not None:
            node.set("this", real)
    return tree
