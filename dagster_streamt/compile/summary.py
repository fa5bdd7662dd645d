"""What the compiler keeps from parsing a model: small, picklable, cached by SQL hash.

The tree itself stays in :mod:`dagster_streamt.sql` (memoized per process); the warm-load cache
only needs the output columns, the error and the query's features.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sql import SqlFeatures, Untranslatable, analyze, output_columns, parse_query


@dataclass(frozen=True)
class ParseSummary:
    columns: tuple[str, ...] | None = None
    error: str | None = None
    line: int = 0  # 1-based line of `error` within the SQL
    features: SqlFeatures | None = None
    problems: tuple[Untranslatable, ...] = ()


def summarize(sql: str) -> ParseSummary:
    parsed = parse_query(sql)
    if parsed.tree is None:
        return ParseSummary(error=parsed.error, line=parsed.line, problems=parsed.problems)
    return ParseSummary(output_columns(parsed.tree), None, 0, analyze(parsed.tree), parsed.problems)


def summarize_many(sqls: list[str]) -> list[ParseSummary]:
    return [summarize(s) for s in sqls]
