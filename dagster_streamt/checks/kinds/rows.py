"""Row-level assertions: each failing row can be singled out (and, in a continuous test, recorded)."""

from __future__ import annotations

from ...sql.identifiers import literal
from ...sql.identifiers import quote_path as ident
from ..params import AcceptedValues, Expression, ExpressionIsTrue, NotNull, Range, Relationships, Unique
from ..parsed import ParsedAssertion
from ..results import Verdict
from ..sql_text import ROW, AssertionSql, SqlContext, as_text
from .base import AssertionKind, Evidence, P, as_int, counted_verdict, pct, register


class _Counted(AssertionKind[P]):
    """A row predicate counted with ``ctx.counted``: the failing rows are the verdict."""

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        return counted_verdict(a, e)


@register
class NotNullKind(AssertionKind[NotNull]):
    name = "not_null"
    params = NotNull
    record_violation = "null_value"

    def describe(self, p: NotNull) -> str:
        return f"not_null: {', '.join(p.columns)} never null"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: NotNull) -> AssertionSql:
        preds = [f"{ident(c)} IS NULL" for c in p.columns]
        per_column = tuple((f"a{a.index}_null_{i}", f"count_if({pred})") for i, pred in enumerate(preds))
        return ctx.counted(a, preds[0] if len(preds) == 1 else f"({' OR '.join(preds)})", self.describe(p),
                           aggregates=per_column if len(preds) > 1 else ())

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, NotNull)
        v = e.of(a)
        observed = {c: as_int(v.get(f"null_{i}")) for i, c in enumerate(p.columns)} if len(p.columns) > 1 else {}
        return counted_verdict(a, e, observed)


@register
class UniqueKind(AssertionKind[Unique]):
    name = "unique"
    params = Unique
    aliases = ("unique_key",)
    record_violation = "duplicate_key"
    record_check = "duplicates"

    def describe(self, p: Unique) -> str:
        tol = f" (up to {pct(p.tolerance)} duplicate rows allowed)" if p.tolerance else ""
        return f"unique: no two rows share ({', '.join(p.keys)}){tol}"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: Unique) -> AssertionSql:
        cols = [ident(c) for c in p.keys]
        keyed = " AND ".join(f"{c} IS NOT NULL" for c in cols)
        tup = cols[0] if len(cols) == 1 else f"({', '.join(cols)})"
        dupes = (f"{tup} IN (SELECT {', '.join(cols)} FROM {ctx.relation} AS `__u` WHERE {keyed} "
                 f"GROUP BY {', '.join(cols)} HAVING count(*) > 1)")
        aggs = ((f"a{a.index}_keyed", f"count_if({keyed})"),
                (f"a{a.index}_distinct", f"count(DISTINCT {', '.join(cols)})"))
        return AssertionSql(a, "rows", self.describe(p), aggregates=aggs, violation_predicate=dupes)

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, Unique)
        v = e.of(a)
        dupes = as_int(v["keyed"]) - as_int(v["distinct"])
        ratio = dupes / e.total if e.total else 0.0
        ok = dupes == 0 or (p.tolerance > 0 and ratio <= p.tolerance)
        msg = f"{dupes} duplicate rows ({ratio:.2%} of {e.total})" if dupes else ""
        return Verdict(ok, dupes, msg, {"duplicate_ratio": ratio})


@register
class AcceptedValuesKind(_Counted[AcceptedValues]):
    name = "accepted_values"
    params = AcceptedValues
    record_violation = "unaccepted_value"

    def describe(self, p: AcceptedValues) -> str:
        how = "" if p.quote else " (unquoted)"
        return f"accepted_values: {p.column} in {p.values!r}{how}"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: AcceptedValues) -> AssertionSql:
        col = ident(p.column)
        if p.quote:  # compare as text, so `values: [1, 2]` also matches a string column holding '1'
            values = ", ".join(literal(as_text(v)) for v in p.values)
            pred = f"{col} IS NOT NULL AND CAST({col} AS STRING) NOT IN ({values})"
        else:
            pred = f"{col} IS NOT NULL AND {col} NOT IN ({', '.join(literal(v) for v in p.values)})"
        return ctx.counted(a, f"({pred})", self.describe(p))


@register
class RangeKind(_Counted[Range]):
    name = "range"
    params = Range
    record_violation = "out_of_range"

    def describe(self, p: Range) -> str:
        lo, hi = ("<=", "<=") if p.inclusive else ("<", "<")
        left = f"{p.min} {lo} " if p.min is not None else ""
        right = f" {hi} {p.max}" if p.max is not None else ""
        return f"range: {left}{p.column}{right}"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: Range) -> AssertionSql:
        col = ident(p.column)
        lo, hi = ("<", ">") if p.inclusive else ("<=", ">=")
        outside = [f"{col} {lo} {literal(p.min)}"] if p.min is not None else []
        outside += [f"{col} {hi} {literal(p.max)}"] if p.max is not None else []
        return ctx.counted(a, f"({col} IS NOT NULL AND ({' OR '.join(outside)}))", self.describe(p))


@register
class RelationshipsKind(AssertionKind[Relationships]):
    name = "relationships"
    params = Relationships
    aliases = ("foreign_key",)
    record_violation = "missing_reference"
    record_check = "references"

    def describe(self, p: Relationships) -> str:
        kind, name = p.target
        rate = f" (at least {pct(p.match_rate)} of rows)" if p.match_rate < 1 else ""
        fn = "ref" if kind == "model" else "source"
        return f"relationships: every {p.column} exists in {fn}(\"{name}\").{p.target_field}{rate}"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: Relationships) -> AssertionSql:
        target = ctx.resolve(*p.target)
        col, key, r = f"{ROW}.{ident(p.column)}", ident(p.target_field), f"`__r{a.index}`"
        k = f"`__k{a.index}`"
        join = (f"LEFT JOIN (SELECT DISTINCT {key} AS {k} FROM {target} WHERE {key} IS NOT NULL) AS {r} "
                f"ON {col} = {r}.{k}")
        missing = f"({col} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {target} AS `__ref` WHERE `__ref`.{key} = {col}))"
        aggs = ((f"a{a.index}_failing", f"count_if({col} IS NOT NULL AND {r}.{k} IS NULL)"),
                (f"a{a.index}_nonnull", f"count_if({col} IS NOT NULL)"))
        return AssertionSql(a, "rows", self.describe(p), aggregates=aggs, joins=(join,), violation_predicate=missing)

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        p = a.assertion.params
        assert isinstance(p, Relationships)
        v = e.of(a)
        missing, nonnull = as_int(v["failing"]), as_int(v["nonnull"])
        rate = 1 - missing / nonnull if nonnull else 1.0
        ok = missing == 0 or (p.match_rate < 1 and rate >= p.match_rate)
        msg = f"{missing} of {nonnull} non-null values have no match (match rate {rate:.2%})" if missing else ""
        return Verdict(ok, missing, msg, {"match_rate": rate})


def _not_true(expression: str) -> str:
    """The rows failing a per-row condition: false or NULL (streamt's expression and dbt's expression_is_true)."""
    return f"(NOT coalesce(({expression}), false))"


@register
class ExpressionIsTrueKind(_Counted[ExpressionIsTrue]):
    name = "expression_is_true"
    params = ExpressionIsTrue
    record_violation = "expression_false"

    def describe(self, p: ExpressionIsTrue) -> str:
        return f"expression_is_true: {p.expression.strip()} for every row"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: ExpressionIsTrue) -> AssertionSql:
        return ctx.counted(a, _not_true(p.expression), self.describe(p))


@register
class ExpressionKind(_Counted[Expression]):
    name = "expression"
    params = Expression
    record_violation = "expression_false"

    def describe(self, p: Expression) -> str:
        return f"expression: {(p.description or p.sql).strip()} ({p.sql.strip()}) for every row"

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: Expression) -> AssertionSql:
        return ctx.counted(a, _not_true(p.sql), self.describe(p))
