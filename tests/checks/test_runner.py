"""Every assertion passing and failing with exact counts, on real Spark DataFrames."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.checks.kinds import StreamProgress
from dagster_streamt.checks.results import TestResult as Outcome
from dagster_streamt.checks.runner import run_schema_test, run_test
from dagster_streamt.spec.models import Test as SpecTest

from .conftest import at

pytestmark = pytest.mark.spark
REL = "`chk_orders`"


def resolve(kind: str, name: str) -> str:
    return {"customers": "`chk_customers`", "orders": REL}[name]


def run(spark: Any, *assertions: dict, **kw: Any) -> Outcome:
    test = SpecTest(name="t", model="orders", assertions=list(assertions), sample_size=kw.pop("sample_size", None))
    return run_test(spark, test, REL, resolve=resolve, now=kw.pop("now", at(2, 0)), **kw)


def counts(result: Outcome) -> list[tuple[bool, int]]:
    return [(a.passed, a.failing_rows) for a in result.assertions]


def test_not_null(views: Any) -> None:
    r = run(views, {"not_null": {"columns": ["order_id"]}}, {"not_null": {"columns": ["customer_id"]}},
            {"not_null": {"columns": ["customer_id", "ts"]}})
    assert counts(r) == [(True, 0), (False, 2), (False, 3)]
    assert r.total_rows == 6 and not r.passed and r.severity == "error" and r.target == "model.orders"
    sample = r.assertions[1].sample
    assert sorted(row["order_id"] for row in sample) == [3, 5]
    assert all(row["customer_id"] is None for row in sample)
    assert r.assertions[2].observed == {"customer_id": 2, "ts": 1}
    assert [a.label for a in r.assertions] == ["not_null", "not_null_2", "not_null_3"]


def test_unique_with_tolerance(views: Any) -> None:
    r = run(views, {"unique": {"columns": ["order_id"]}}, {"unique_key": {"key": "order_id", "tolerance": 0.2}},
            {"unique_key": {"key": "order_id", "tolerance": 0.1}}, {"unique": {"columns": ["order_id", "status"]}})
    assert counts(r) == [(False, 1), (True, 1), (False, 1), (True, 0)]
    assert sorted(row["status"] for row in r.assertions[0].sample) == ["bogus", "paid"]
    assert r.assertions[1].observed["duplicate_ratio"] == pytest.approx(1 / 6)


def test_accepted_values_quoted_and_unquoted(views: Any) -> None:
    r = run(views, {"accepted_values": {"column": "status", "values": ["paid", "shipped"]}},
            {"accepted_values": {"column": "qty", "values": [1, 2, 3, 4], "quote": False}},
            {"accepted_values": {"column": "qty", "values": [1, 2, 3, 4, 7], "quote": False}},
            {"accepted_values": {"column": "qty", "values": [1, 2, 3, 4]}})
    assert counts(r) == [(False, 1), (False, 1), (True, 0), (False, 1)]
    assert r.assertions[0].sample[0]["status"] == "bogus" and r.assertions[1].sample[0]["qty"] == 7


def test_range_bounds(views: Any) -> None:
    r = run(views, {"range": {"column": "amount", "min": 0, "max": 100}},
            {"range": {"column": "amount", "min": 0, "max": 100, "inclusive": False}},
            {"range": {"column": "amount", "min": -1}}, {"range": {"column": "amount", "max": 1000}},
            {"range": {"column": "amount", "min": -1, "inclusive": False}})
    assert counts(r) == [(False, 2), (False, 3), (True, 0), (True, 0), (False, 1)]
    assert sorted(row["amount"] for row in r.assertions[1].sample) == [-1.0, 100.0, 1000.0]


def test_relationships_with_match_rate(views: Any) -> None:
    r = run(views, {"relationships": {"column": "customer_id", "to": 'ref("customers")', "field": "id"}},
            {"foreign_key": {"column": "customer_id", "ref_model": "customers", "ref_key": "id", "match_rate": 0.7}},
            {"foreign_key": {"column": "customer_id", "ref_model": "customers", "ref_key": "id", "match_rate": 0.8}})
    assert counts(r) == [(False, 1), (True, 1), (False, 1)]
    assert r.assertions[0].observed["match_rate"] == pytest.approx(0.75)
    assert [row["customer_id"] for row in r.assertions[0].sample] == [12]


def test_row_count(views: Any) -> None:
    r = run(views, {"row_count": {"min": 1, "max": 10}}, {"row_count": {"max": 4}}, {"row_count": {"min": 10}})
    assert counts(r) == [(True, 0), (False, 2), (False, 4)]


def test_freshness_with_a_fixed_clock(views: Any) -> None:
    fresh = run(views, {"freshness": {"column": "ts", "max_age": "1h"}}, now=at(2, 0).replace(minute=30))
    stale = run(views, {"freshness": {"column": "ts", "max_age": "1h"}}, now=at(2, 2))
    assert fresh.passed and fresh.assertions[0].observed["age_seconds"] == 1800
    assert not stale.passed and "7200s old" in stale.assertions[0].message
    assert stale.assertions[0].observed["latest"] == "2024-01-02T00:00:00+00:00"


def test_custom_sql_both_forms(views: Any) -> None:
    r = run(views, {"custom_sql": {"where": "amount < 0"}},
            {"custom_sql": {"sql": "SELECT count(*) FROM {{ this }} WHERE amount < 0", "expect": 0}},
            {"custom_sql": {"sql": 'SELECT * FROM {{ ref("orders") }} WHERE amount > 500', "expect": "1 rows"}},
            {"custom_sql": {"sql": 'SELECT o.* FROM {{ ref("orders") }} o JOIN {{ ref("customers") }} c '
                                   "ON o.customer_id = c.id WHERE o.amount > 10"}})
    assert counts(r) == [(False, 1), (False, 1), (True, 0), (False, 2)]
    assert r.assertions[0].sample[0]["order_id"] == 3
    assert r.assertions[1].observed == {"value": 1, "expect": 0} and r.assertions[1].sample == []
    assert sorted(row["order_id"] for row in r.assertions[3].sample) == [2, 6]
    assert {row["ts"] for row in r.assertions[3].sample} == {"2024-01-01T11:00:00+00:00", "2024-01-01T09:00:00+00:00"}


def test_expression_is_true_counts_null_as_violation(views: Any) -> None:
    r = run(views, {"expression_is_true": {"expression": "amount * qty >= 0"}},
            {"expression_is_true": {"expression": "customer_id > 0"}})
    assert counts(r) == [(False, 1), (False, 2)]


def test_distribution(views: Any) -> None:
    ok = run(views, {"distribution": {"column": "status", "buckets": [{"value": "paid", "expected_ratio": 0.6},
                                                                      {"value": "shipped", "expected_ratio": 0.2}]}},
             {"distribution": {"column": "amount", "buckets": [
                 {"min": 0, "max": 100, "expected_ratio": 0.5},
                 {"min": 100, "expected_ratio": 0.3, "tolerance": 0.05}]}})
    assert counts(ok) == [(True, 0), (True, 0)]
    assert ok.assertions[0].observed["ratios"] == [0.6, 0.2]
    bad = run(views, {"distribution": {"column": "status", "tolerance": 0.1,
                                       "buckets": [{"value": "paid", "expected_ratio": 0.9}]}})
    assert counts(bad) == [(False, 1)] and "bucket 1" in bad.assertions[0].message


def test_accepted_types_from_the_live_schema(views: Any) -> None:
    r = run(views, {"accepted_types": {"types": {"order_id": "long", "amount": "number", "status": "string"}}},
            {"accepted_types": {"types": {"qty": "bigint"}}})
    assert counts(r) == [(True, 0), (False, 1)]
    assert "qty: is int, expected bigint" in r.assertions[1].message


def test_streaming_assertions_need_progress(views: Any) -> None:
    test = SpecTest(name="c", model="orders", type="continuous",
                    assertions=[{"throughput": {"min_per_second": 10}},
                                {"max_lag": {"column": "ts", "max_seconds": 60}}])
    without = run_test(views, test, REL)
    assert not without.passed and all(a.error for a in without.assertions)
    progress = StreamProgress(rows_per_second=20, max_event_time=at(2, 0), processing_time=at(2, 0).replace(second=30))
    with_progress = run_test(views, test, REL, progress=progress)
    assert with_progress.passed, with_progress.assertions


def test_sample_size_limits_rows_tested(views: Any) -> None:
    r = run(views, {"row_count": {"max": 2}}, {"not_null": {"columns": ["customer_id"]}}, sample_size=2)
    assert r.total_rows == 2 and r.passed
    assert views.sql("SHOW VIEWS LIKE '__streamt_sample*'").count() == 0  # the cached sample is dropped


def test_unevaluable_assertions_are_errors_not_passes(views: Any) -> None:
    r = run(views, {"not_null": {"columns": ["order_id"]}}, {"not_null": {"columns": ["no_such_column"]}},
            {"range": {"column": "amount"}}, {"custom_sql": {"sql": "SELECT count(*) FROM {{ ref('nope') }}"}})
    assert [(a.passed, a.error is None) for a in r.assertions] == [(True, True), (False, False), (False, False),
                                                                  (False, False)]
    assert "no_such_column" in str(r.assertions[1].error)
    assert "min" in str(r.assertions[2].error)
    assert not r.passed


def test_missing_relation_fails_every_assertion(views: Any) -> None:
    test = SpecTest(name="t", model="orders", assertions=[{"row_count": {"min": 0}}])
    r = run_test(views, test, "`chk_no_such_view`")
    assert not r.passed and r.error and r.assertions[0].error


def test_warn_severity(views: Any) -> None:
    test = SpecTest(name="t", model="orders", severity="warning", assertions=[{"row_count": {"max": 1}}])
    assert run_test(views, test, REL).severity == "warn"


def test_one_aggregate_query_runs_when_everything_passes(views: Any) -> None:
    executed: list[str] = []

    class Spy:
        def __getattr__(self, name: str) -> Any:
            return getattr(views, name)

        def sql(self, query: str, *a: Any, **kw: Any) -> Any:
            executed.append(query)
            return views.sql(query, *a, **kw)

    test = SpecTest(name="t", model="orders", assertions=[
        {"not_null": {"columns": ["order_id", "amount"]}},
        {"accepted_values": {"column": "qty", "values": [1, 2, 3, 4, 7]}},
        {"range": {"column": "amount", "min": -1}}, {"expression_is_true": {"expression": "qty > 0"}},
        {"custom_sql": {"where": "amount > 10000"}}, {"row_count": {"min": 1}},
        {"unique": {"columns": ["order_id", "status"]}}, {"relationships": {"column": "customer_id",
                                                                             "to": 'ref("customers")', "field": "id",
                                                                             "match_rate": 0.5}}])
    r = run_test(Spy(), test, REL, resolve=resolve)
    assert r.passed, [a.message for a in r.assertions]
    aggregates = [q for q in executed if "count(*) AS total" in q]
    assert len(aggregates) == 1 and len(executed) == 2  # + one schema lookup (analysis only, no job)


def test_schema_test_against_a_live_dataframe(views: Any) -> None:
    df = views.table("chk_orders")
    ok = SpecTest(name="s", model="orders", type="schema", assertions=[
        {"not_null": {"columns": ["order_id"]}}, {"accepted_types": {"types": {"amount": "double"}}},
        {"expression_is_true": {"expression": "amount >= 0"}},
        {"relationships": {"column": "customer_id", "to": 'ref("customers")', "field": "id"}}])
    assert run_schema_test(df, ok, resolve=resolve).passed
    bad = SpecTest(name="s", model="orders", type="schema", assertions=[
        {"not_null": {"columns": ["order_idd"]}}, {"accepted_types": {"types": {"amount": "string"}}},
        {"expression_is_true": {"expression": "amout >= 0"}},
        {"relationships": {"column": "customer_id", "to": 'ref("customers")', "field": "key"}},
        {"row_count": {"min": 1}}])
    r = run_schema_test(df, bad, resolve=resolve)
    assert [a.passed for a in r.assertions] == [False] * 5
    assert 'did you mean "order_id"' in r.assertions[0].message
    assert r.assertions[2].error and "amout" in r.assertions[2].error
    assert r.assertions[3].error and "key" in r.assertions[3].error
    assert "type: sample" in str(r.assertions[4].error)
