"""What the compiler keeps from parsing a model: small, picklable, cached by SQL hash.

The tree itself stays in :mod:`dagster_streamt.sql` (memoized per process); the warm-load cache
only needs the output columns, the error and the query's features.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sql import SqlFeatures, Untranslatable, analyze, output_columns, parse_query
from ..sql.flink import TranslationError, translate
from .compiled import CompiledModel


@dataclass(frozen=True)
class ParseSummary:
    columns: tuple[str, ...] | None = None
    error: str | None = None
    line: int = 0  # 1-based line of `error` within the SQL
    features: SqlFeatures | None = None
    problems: tuple[Untranslatable, ...] = ()
    spark_sql: str | None = None  # the Flink SQL translated; None when Spark runs the SQL as written
    notes: tuple[str, ...] = ()  # what the translation changed in meaning (temporal joins)
    time_columns: tuple[str, ...] = ()  # what windows and interval joins are computed on


def _line_of(sql: str, word: str) -> int:
    upper = word.upper()
    return next((i for i, text in enumerate(sql.splitlines(), 1) if upper in text.upper()), 1)


def summarize(sql: str) -> ParseSummary:
    parsed = parse_query(sql)
    if parsed.tree is None:
        return ParseSummary(error=parsed.error, line=parsed.line, problems=parsed.problems)
    features = analyze(parsed.tree)
    try:
        translation = translate(parsed.tree)
    except TranslationError as exc:
        problem = Untranslatable(exc.construct, _line_of(sql, exc.construct), str(exc))
        return ParseSummary(output_columns(parsed.tree), None, 0, features, (*parsed.problems, problem))
    return ParseSummary(output_columns(parsed.tree), None, 0, features, parsed.problems, translation.sql,
                        translation.notes, translation.window_columns)


def stream_sql(cm: CompiledModel) -> str | None:
    """The Spark SQL a stream model runs (streams have no distinct aggregation: see sql.flink)."""
    if cm.materialized != "stream" or not cm.sql or cm.features is None:
        return cm.spark_sql
    parsed = parse_query(cm.sql)
    try:
        return translate(parsed.tree, streaming=True).sql if parsed.tree is not None else cm.spark_sql
    except TranslationError:
        return cm.spark_sql
