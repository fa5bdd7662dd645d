"""Run a test's assertions against a Spark relation: one aggregate query, then small samples of the
failing rows for the assertions that failed. Knows nothing of Dagster.

Never a silent pass: an assertion that cannot be evaluated (bad parameters, SQL Spark rejects, a
streaming-only rule without progress numbers) is a failed result carrying ``error``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from time import perf_counter
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from ..spec.models import Test
from ..spec.suggest import did_you_mean
from .assertions import parse_assertions
from .kinds import KINDS, Evidence, StreamProgress
from .parsed import AssertionIssue, ParsedAssertion
from .results import AssertionResult, TestResult, Verdict, json_safe, severity_of, target_of
from .sql import AssertionSql, TestSql, build_test_sql

Resolve = Callable[[str, str], str]
_NOISE = re.compile(r"^(JVM stacktrace:|Traceback|\tat |at |py4j\.|An error occurred while calling)")


def short_error(exc: BaseException) -> str:
    """The first line of a (possibly JVM) error that says what went wrong."""
    for line in (str(exc) or type(exc).__name__).splitlines():
        line = line.strip()
        if line and not _NOISE.match(line):
            return re.sub(r"\s*SQLSTATE: \w+\s*$", "", line)[:600]
    return type(exc).__name__


def _issue_result(issue: AssertionIssue) -> AssertionResult:
    message = issue.message + (f" ({issue.hint})" if issue.hint else "")
    return AssertionResult(issue.index, issue.written, issue.written, False, 0, 0, f"{issue.written}: invalid",
                           message=message, error=message)


def _result(a: AssertionSql, verdict: Verdict, total: int, sample: list[dict[str, Any]] | None = None,
            error: str | None = None) -> AssertionResult:
    pa = a.assertion
    return AssertionResult(pa.index, pa.name, pa.label, verdict.passed and error is None, verdict.failing_rows,
                           total, a.description, a.sql, error or verdict.message, sample or [],
                           dict(verdict.observed), error)


def _aggregate(spark: SparkSession, built: TestSql) -> tuple[dict[str, Any], dict[int, str]]:
    """Run the single statement; when Spark rejects it, run each assertion alone to isolate the culprit."""
    try:
        row = spark.sql(built.statement).first()
        return (row.asDict() if row is not None else {}), {}
    except Exception as whole:  # any Spark error becomes an error result, never a crash
        values: dict[str, Any] = {}
        errors: dict[int, str] = {}
        for a in built.assertions:
            if not a.sql or a.error:
                continue
            try:
                row = spark.sql(a.sql).first()
                values.update(row.asDict() if row is not None else {})
            except Exception as exc:
                errors[a.assertion.index] = short_error(exc)
        if not errors:  # the parts run alone but not together: blame the whole statement
            errors = {a.assertion.index: short_error(whole) for a in built.assertions if a.sql}
        if "total" not in values:
            counted = spark.sql(f"SELECT count(*) AS total FROM {built.relation}").first()
            values["total"] = counted[0] if counted is not None else 0
        return values, errors


def _sample(spark: SparkSession, built: TestSql, a: AssertionSql, limit: int) -> tuple[list[dict[str, Any]], str]:
    query = built.sample_query(a, limit) if limit > 0 else None
    if query is None:
        return [], ""
    try:
        df = spark.sql(query)
        zoned = [f.name for f in df.schema.fields if f.dataType.typeName() == "timestamp"]
        rows = [r.asDict() for r in df.collect()]
    except Exception as exc:  # the verdict stands; only the sample is missing
        return [], f"sample not available: {short_error(exc)}"
    for row in rows:  # pyspark gives TIMESTAMP values as naive local times: make the instant explicit
        for name in zoned:
            if isinstance(row.get(name), datetime) and row[name].tzinfo is None:
                row[name] = row[name].astimezone(UTC)
    return [json_safe(r) for r in rows], ""


def _analysis_error(spark: SparkSession, query: str) -> str | None:
    """Let Spark resolve ``query`` (names, types, subqueries) without running a job: its objection, or None."""
    try:
        _ = spark.sql(query).schema
    except Exception as exc:
        return short_error(exc)
    return None


def _types(df: DataFrame) -> dict[str, str]:
    return {f.name: f.dataType.simpleString() for f in df.schema.fields}


def run_test(spark: SparkSession, test: Test, relation: str, *, resolve: Resolve | None = None,
             sample_rows: int = 5, now: datetime | None = None, default_severity: str = "error",
             progress: StreamProgress | None = None, variables: Mapping[str, Any] | None = None,
             select: Callable[[ParsedAssertion], bool] | None = None) -> TestResult:
    """Run every assertion of ``test`` (or those ``select`` keeps) against ``relation`` (a backquoted
    view or table name).

    ``resolve(kind, name)`` gives the relation of another model/source (relationships, custom SQL);
    ``now`` fixes the clock for freshness (naive = UTC); ``sample_rows`` failing rows are kept per
    failed assertion. With ``sample_size`` the first N rows are cached once so that the counts and
    the samples see the same rows.
    """
    started = perf_counter()
    now = now or datetime.now(UTC)
    parsed, issues = parse_assertions(test)
    if select is not None:
        parsed = [a for a in parsed if select(a)]
    kind, name = target_of(test)
    results = {i.index: _issue_result(i) for i in issues}
    cached: DataFrame | None = None
    view = relation
    built: TestSql | None = None
    error: str | None = None
    total = 0
    try:
        if test.sample_size:
            view = f"`__streamt_sample_{uuid.uuid4().hex[:12]}`"
            cached = spark.sql(f"SELECT * FROM {relation} LIMIT {int(test.sample_size)}").cache()
            cached.createOrReplaceTempView(view.strip("`"))
        built = build_test_sql(parsed, view, resolve=resolve, target=(kind, name), variables=variables)
        types = _types(spark.sql(f"SELECT * FROM {view}"))
        values, errors = _aggregate(spark, built)
        total = int(values.get("total") or 0)
        for a in built.assertions:
            idx = a.assertion.index
            if a.error or idx in errors:
                results[idx] = _result(a, Verdict(False), total, error=a.error or errors[idx])
                continue
            try:
                verdict = KINDS[a.assertion.name].verdict(a, Evidence(values, total, types, now, progress))
            except Exception as exc:  # one assertion that cannot be judged must not hide the others
                results[idx] = _result(a, Verdict(False), total, error=str(exc) or type(exc).__name__)
                continue
            sample: list[dict[str, Any]] = []
            if not verdict.passed:
                sample, note = _sample(spark, built, a, sample_rows)
                if note:
                    verdict = Verdict(verdict.passed, verdict.failing_rows, verdict.message,
                                      {**verdict.observed, "sample_error": note})
            results[idx] = _result(a, verdict, total, sample)
    except Exception as exc:  # the relation itself is unusable: every assertion errors
        error = short_error(exc)
        for pa in parsed:
            if pa.index not in results:
                results[pa.index] = AssertionResult(pa.index, pa.name, pa.label, False, 0, 0, pa.name, error=error,
                                                    message=error)
    finally:
        if cached is not None:
            spark.catalog.dropTempView(view.strip("`"))
            cached.unpersist()
    ordered = tuple(results[i] for i in sorted(results))
    return TestResult(test.name, f"{kind}.{name}", severity_of(test, default_severity),
                      error is None and all(r.passed for r in ordered), ordered, perf_counter() - started, total,
                      built.statement if built else "", error)


def _missing_columns(a: ParsedAssertion, columns: list[str]) -> list[str]:
    lower = {c.lower() for c in columns}
    out = []
    for col in a.params.columns_used():
        if col.split(".", 1)[0].lower() not in lower:
            hint = did_you_mean(col, columns)
            out.append(f"column {col!r} is not in the schema" + (f" ({hint})" if hint else ""))
    return out


def run_schema_test(df: DataFrame, test: Test, *, resolve: Resolve | None = None, default_severity: str = "error",
                    variables: Mapping[str, Any] | None = None) -> TestResult:
    """Check ``test`` against a live DataFrame's schema without reading data (used after a model
    materializes): asserted columns exist, accepted_types match, and Spark can analyze every
    assertion's SQL (expressions, custom SQL, relationships targets). Data rules are not evaluated:
    ``row_count`` (which has no structure to check) is an error result, never a pass."""
    started = perf_counter()
    spark = df.sparkSession
    parsed, issues = parse_assertions(test)
    kind, name = target_of(test)
    results = {i.index: _issue_result(i) for i in issues}
    view = f"__streamt_schema_{uuid.uuid4().hex[:12]}"
    df.createOrReplaceTempView(view)
    try:
        built = build_test_sql(parsed, f"`{view}`", resolve=resolve, target=(kind, name), variables=variables)
        types = _types(df)
        whole_ok = _analysis_error(spark, built.statement) is None
        for a in built.assertions:
            missing = _missing_columns(a.assertion, list(types))
            error = a.error
            if KINDS[a.assertion.name].needs_rows:
                error = f"{a.assertion.name} needs data: move it to a `type: sample` test"
            elif not whole_ok and a.sql and not missing and error is None:
                error = _analysis_error(spark, a.sql)
            if error:
                verdict = Verdict(False)
            elif a.kind == "schema":
                verdict = KINDS[a.assertion.name].verdict(a, Evidence(types=types))
            else:
                verdict = Verdict(not missing, len(missing), "; ".join(missing))
            results[a.assertion.index] = _result(a, verdict, 0, error=error)
    finally:
        spark.catalog.dropTempView(view)
    ordered = tuple(results[i] for i in sorted(results))
    return TestResult(test.name, f"{kind}.{name}", severity_of(test, default_severity),
                      all(r.passed for r in ordered), ordered, perf_counter() - started)


__all__ = ["run_schema_test", "run_test", "short_error"]
