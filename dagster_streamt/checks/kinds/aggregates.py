"""Assertions judged on the whole relation (or one micro-batch): counts, ages, ratios, custom queries,
types; plus ``positive``, streamt's spelling of a range."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlglot import exp

from ...sql import parse_query
from ...sql.identifiers import literal
from ...sql.identifiers import quote_path as ident
from ..evaluate import check_types, epoch
from ..params import AcceptedTypes, CustomSql, Distribution, Freshness, Params, Positive, RowCount
from ..parsed import ParsedAssertion
from ..results import Verdict
from ..sql_text import AssertionSql, SqlContext
from .base import AssertionKind, Evidence, Mode, as_int, counted_verdict, pct, register


@register
class RowCountKind(AssertionKind[RowCount]):
    name = "row_count"
    params = RowCount
    needs_rows = True
    batch_violation = "row_count_out_of_bounds"

    def describe(self, p: RowCount) -> str:
        low, high = p.min if p.min is not None else 0, p.max if p.max is not None else "any"
        return f"row_count: between {low} and {high} rows"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: RowCount) -> AssertionSql:
        return AssertionSql(a, "aggregate", self.describe(p))  # the statement's count(*) is the answer

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, RowCount)
        short = max(0, p.min - e.total) if p.min is not None else 0
        over = max(0, e.total - p.max) if p.max is not None else 0
        return Verdict(short == over == 0, short + over, f"{e.total} rows" if short or over else "",
                       {"row_count": e.total})


@register
class FreshnessKind(AssertionKind[Freshness]):
    name = "freshness"
    params = Freshness
    batch_violation = "stale_data"

    def describe(self, p: Freshness) -> str:
        return f"freshness: newest {p.column} at most {p.max_age} old"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: Freshness) -> AssertionSql:
        agg = (f"a{a.index}_latest", f"unix_micros(CAST(max({ident(p.column)}) AS TIMESTAMP))")
        return AssertionSql(a, "aggregate", self.describe(p), aggregates=(agg,))

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, Freshness)
        latest_micros = e.of(a)["latest"]
        if latest_micros is None:
            return Verdict(False, 0, f"no non-null {p.column!r} value: the data has no age", {})
        latest = int(latest_micros) / 1e6
        age = epoch(e.now or datetime.now(UTC)) - latest
        observed = {"latest": datetime.fromtimestamp(latest, UTC).isoformat(), "age_seconds": round(age, 3)}
        ok = age <= p.max_age_seconds
        message = "" if ok else f"newest {p.column} is {age:.0f}s old (max {p.max_age_seconds:g}s)"
        return Verdict(ok, 0, message, observed)


def is_count_query(query: str) -> bool:
    """Does ``query`` return one aggregate value (``SELECT count(*) FROM ...``) rather than rows?"""
    tree = parse_query(query).tree
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or tree.args.get("group"):
        return False
    projection = tree.expressions[0]
    projection = projection.this if isinstance(projection, exp.Alias) else projection
    return isinstance(projection, exp.AggFunc)


@register
class CustomSqlKind(AssertionKind[CustomSql]):
    name = "custom_sql"
    params = CustomSql
    record_violation = "custom_sql"  # with `where:` (a row predicate)
    batch_violation = "custom_sql_mismatch"  # with `sql:` (a query judged per micro-batch)

    def describe(self, p: CustomSql) -> str:
        if p.where is not None:
            return f"custom_sql: no row where {p.where.strip()}"
        if p.max_failures is not None:
            return f"custom_sql: query returns at most {p.max_failures} failures"
        return f"custom_sql: query returns {p.expected} (row count or value)"

    def mode(self, p: CustomSql) -> Mode:
        return "row" if p.where is not None else "batch"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: CustomSql) -> AssertionSql:
        if p.where is not None:
            return ctx.counted(a, f"({p.where})", self.describe(p))
        query = ctx.render(p.sql or "")
        if is_count_query(query):
            return AssertionSql(a, "aggregate", self.describe(p), aggregates=((f"a{a.index}_value", f"({query})"),))
        value = f"(SELECT count(*) FROM ({query}) AS `__q`)"
        return AssertionSql(a, "aggregate", self.describe(p), aggregates=((f"a{a.index}_value", value),),
                            sample_from=query)

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, CustomSql)
        v = e.of(a)
        if "failing" in v:
            return counted_verdict(a, e)
        value = v["value"]
        if value is None:
            return Verdict(False, 0, "the query returned NULL instead of a count", {"value": None})
        number = float(value)
        shown = int(number) if number.is_integer() else number
        if p.max_failures is not None:
            ok = number <= p.max_failures
            return Verdict(ok, int(number), "" if ok else f"query returned {shown} failures, at most "
                           f"{p.max_failures} allowed", {"value": shown, "max_failures": p.max_failures})
        ok = number == p.expected
        miss = int(abs(number - p.expected))
        return Verdict(ok, miss, "" if ok else f"query returned {shown}, expected {p.expected}",
                       {"value": shown, "expect": p.expected})


@register
class DistributionKind(AssertionKind[Distribution]):
    name = "distribution"
    params = Distribution
    batch_violation = "distribution_mismatch"

    def describe(self, p: Distribution) -> str:
        return f"distribution: {p.column} matches {len(p.buckets)} bucket ratio(s) within {pct(p.tolerance)}"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: Distribution) -> AssertionSql:
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
        return AssertionSql(a, "aggregate", self.describe(p), aggregates=tuple(aggs))

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, Distribution)
        v = e.of(a)
        nonnull = as_int(v["nonnull"])
        ratios = [as_int(v[f"bucket_{j}"]) / nonnull if nonnull else 0.0 for j in range(len(p.buckets))]
        bad = []
        for j, (bucket, ratio) in enumerate(zip(p.buckets, ratios, strict=True)):
            tol = bucket.tolerance if bucket.tolerance is not None else p.tolerance
            if abs(ratio - bucket.expected_ratio) > tol:
                bad.append(f"bucket {j + 1}: {ratio:.2%} vs expected {bucket.expected_ratio:.2%} ± {tol:.2%}")
        if nonnull == 0:
            bad = ["no non-null values to distribute"]
        return Verdict(not bad, len(bad), "; ".join(bad), {"ratios": [round(r, 6) for r in ratios]})


@register
class AcceptedTypesKind(AssertionKind[AcceptedTypes]):
    name = "accepted_types"
    params = AcceptedTypes
    evaluated_from = "schema"
    batch_violation = "type_mismatch"

    def describe(self, p: AcceptedTypes) -> str:
        return "accepted_types: " + ", ".join(f"{c} is {t}" for c, t in p.types.items())

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, AcceptedTypes)
        return check_types(p, e.types)


@register
class PositiveKind(AssertionKind[Positive]):
    """streamt's ``positive``: parsed straight into a ``range`` (see :meth:`canonical`)."""

    name = "positive"
    params = Positive

    def canonical(self, p: Positive) -> tuple[str, Params]:
        return "range", p.as_range()
