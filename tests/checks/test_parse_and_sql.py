"""Assertion parameters, type names, verdict rules and the SQL builder: pure Python, no Spark."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlglot
from sqlglot import exp

from dagster_streamt.checks.assertions import parse_assertions
from dagster_streamt.checks.evaluate import check_max_lag, check_throughput, check_types
from dagster_streamt.checks.kinds.aggregates import is_count_query
from dagster_streamt.checks.params import CustomSql, MaxLag, Throughput
from dagster_streamt.checks.results import json_safe, severity_of
from dagster_streamt.checks.sql import build_test_sql, ident
from dagster_streamt.core.durations import parse_duration
from dagster_streamt.spec.models import Test as SpecTest
from dagster_streamt.sql.identifiers import literal
from dagster_streamt.sql.spark_types import normalize_type, type_matches


def make(*assertions: dict, **kw: object) -> SpecTest:
    return SpecTest(name="t", model="m", assertions=list(assertions), **kw)


def test_aliases_and_streamt_spellings_normalize() -> None:
    parsed, issues = parse_assertions(make(
        {"unique_key": {"key": "id", "tolerance": 0.01, "window": "1 HOUR"}},
        {"foreign_key": {"column": "c", "ref_model": "customers", "ref_key": "id", "match_rate": 0.99}},
        {"relationships": {"column": "c", "to": "source('raw')", "field": "id"}},
        {"custom_sql": {"sql": "SELECT 1", "expect": "0 rows"}},
        {"not_null": {"columns": ["a"]}}, {"not_null": {"columns": ["b"]}},
    ))
    assert issues == []
    assert [p.name for p in parsed] == ["unique", "relationships", "relationships", "custom_sql", "not_null",
                                        "not_null"]
    assert parsed[0].params.keys == ["id"]
    assert parsed[1].params.target == ("model", "customers") and parsed[1].params.target_field == "id"
    assert parsed[2].params.target == ("source", "raw")
    assert isinstance(parsed[3].params, CustomSql) and parsed[3].params.expected == 0
    assert [p.label for p in parsed[4:]] == ["not_null", "not_null_2"]


def test_issues_say_what_and_where() -> None:
    _, issues = parse_assertions(make(
        {"not_nul": {"columns": ["a"]}},
        {"unique": {"columns": ["a"], "tolerence": 0.1}},
        {"range": {"column": "a"}},
        {"accepted_values": {"column": "a", "values": ["x"], "quote": False}},
        {"relationships": {"column": "a", "to": "customers", "field": "id"}},
        {"freshness": {"column": "t", "max_age": "10 fortnights"}},
        {"range": {"column": "a", "min": [1]}},
        {"not_null": "a"},
    ))
    got = [(i.index, i.kind, i.key) for i in issues]
    assert got == [(0, "unknown_assertion", ()), (1, "unknown_key", ("tolerence",)), (2, "missing_key", ()),
                   (3, "bad_value", ()), (4, "bad_value", ("to",)), (5, "bad_value", ("max_age",)),
                   (6, "bad_value", ("min",)), (7, "bad_value", ())]
    assert issues[0].hint == 'did you mean "not_null"?'
    assert issues[1].hint == 'did you mean "tolerance"?'
    assert "expected int or float" in issues[6].message and "got list" in issues[6].message


@pytest.mark.parametrize(("text", "seconds"), [("45s", 45), ("30m", 1800), ("1h", 3600), ("2d", 172800),
                                               ("1 hour", 3600), ("90 minutes", 5400), (120, 120)])
def test_durations(text: str | int, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_duration_rejects_ambiguous_units() -> None:
    with pytest.raises(ValueError, match="cannot read duration"):
        parse_duration("10ms")


def test_type_names_normalize() -> None:
    assert normalize_type("Integer") == "int" and normalize_type("LONG") == "bigint"
    assert normalize_type("numeric(5, 2)") == "decimal(5,2)"
    assert type_matches("number", "decimal(10,2)") and type_matches("number", "bigint")
    assert type_matches("decimal", "decimal(38,4)") and not type_matches("decimal(5,2)", "decimal(38,4)")
    assert type_matches("string", "varchar(10)") and not type_matches("timestamp", "timestamp_ntz")
    assert normalize_type("widget") is None


def test_type_check_verdict() -> None:
    parsed, _ = parse_assertions(make({"accepted_types": {"types": {"id": "long", "amt": ["int", "double"],
                                                                   "nope": "string"}}}))
    v = check_types(parsed[0].params, {"id": "bigint", "amt": "double", "name": "string"})
    assert not v.passed and v.failing_rows == 1 and "nope: no such column" in v.message


def test_progress_checks_never_pass_without_numbers() -> None:
    assert not check_throughput(None, Throughput(min_per_second=1)).passed
    assert check_throughput(5.0, Throughput(min_per_second=1, max_per_second=10)).passed
    assert not check_throughput(0.5, Throughput(min_per_second=1)).passed
    assert not check_throughput(11, Throughput(max_per_second=10)).passed
    lag = MaxLag(column="ts", max_seconds=60)
    assert not check_max_lag(None, datetime(2024, 1, 1, tzinfo=UTC), lag).passed
    ok = check_max_lag(datetime(2024, 1, 1, 0, 0), datetime(2024, 1, 1, 0, 0, 30, tzinfo=UTC), lag)
    assert ok.passed and ok.observed["lag_seconds"] == 30
    assert not check_max_lag(1000.0, 1061.0, lag).passed


def test_severity_mapping() -> None:
    assert severity_of(make({"not_null": {"columns": ["a"]}})) == "error"
    assert severity_of(make({"not_null": {"columns": ["a"]}}, severity="warning")) == "warn"
    assert severity_of(make({"not_null": {"columns": ["a"]}}, on_failure={"severity": "warning"})) == "warn"
    assert severity_of(make({"not_null": {"columns": ["a"]}}), default="warn") == "warn"


def test_literals_and_identifiers_are_escaped() -> None:
    assert literal("it's \\ here") == "'it\\'s \\\\ here'"
    assert literal(True) == "true" and literal(3) == "3" and literal(None) == "NULL"
    assert literal(datetime(2024, 1, 2, 3, 4, 5)) == "TIMESTAMP '2024-01-02 03:04:05'"
    assert ident("payload.id") == "`payload`.`id`" and ident("we`ird") == "`we``ird`"


def test_json_safe_values() -> None:
    from decimal import Decimal

    assert json_safe({"a": Decimal("1.10"), "b": datetime(2024, 1, 1), "c": float("nan"), "d": b"\x00"}) == {
        "a": "1.10", "b": "2024-01-01T00:00:00", "c": "nan", "d": "AA=="}


def test_count_query_detection() -> None:
    assert is_count_query("SELECT COUNT(*) FROM t WHERE x < 0")
    assert is_count_query("select count(*) as n from t")
    assert not is_count_query("SELECT * FROM t WHERE x < 0")
    assert not is_count_query("SELECT k, count(*) FROM t GROUP BY k")


ROW_LEVEL = [
    {"not_null": {"columns": ["a", "b"]}},
    {"unique": {"columns": ["a"]}},
    {"accepted_values": {"column": "s", "values": ["x", "y"]}},
    {"accepted_values": {"column": "n", "values": [1, 2], "quote": False}},
    {"range": {"column": "n", "min": 0, "max": 10}},
    {"relationships": {"column": "c", "to": 'ref("customers")', "field": "id"}},
    {"row_count": {"min": 1}},
    {"freshness": {"column": "ts", "max_age": "1h"}},
    {"custom_sql": {"where": "n < 0"}},
    {"custom_sql": {"sql": "SELECT count(*) FROM {{ this }} WHERE n > 5", "expect": 0}},
    {"expression_is_true": {"expression": "n >= 0"}},
    {"distribution": {"column": "s", "buckets": [{"value": "x", "expected_ratio": 0.5}]}},
]


def test_one_aggregate_statement_for_many_assertions() -> None:
    parsed, issues = parse_assertions(make(*ROW_LEVEL))
    assert issues == []
    built = build_test_sql(parsed, "`orders`", target=("model", "orders"))
    statements = sqlglot.parse(built.statement, read="spark")
    assert len(statements) == 1 and isinstance(statements[0], exp.Select)
    aliases = [e.alias_or_name for e in statements[0].expressions]
    assert aliases[0] == "total" and len(aliases) == 1 + sum(len(a.aggregates) for a in built.assertions)
    assert all(a.error is None for a in built.assertions)
    # custom SQL naming the tested model reads the tested relation
    assert "FROM `orders` WHERE n > 5" in built.statement


def test_sample_size_wraps_the_relation_and_predicates_fetch_samples() -> None:
    parsed, _ = parse_assertions(make({"not_null": {"columns": ["a"]}}, {"row_count": {"min": 1}}))
    built = build_test_sql(parsed, "`orders`", sample_size=100)
    assert "FROM (SELECT * FROM `orders` LIMIT 100) AS `__t`" in built.statement
    assert built.sample_query(built.assertions[0], 5) == (
        "SELECT `__t`.* FROM (SELECT * FROM `orders` LIMIT 100) AS `__t` WHERE `a` IS NULL LIMIT 5")
    assert built.sample_query(built.assertions[1], 5) is None


def test_template_errors_become_assertion_errors() -> None:
    parsed, _ = parse_assertions(make({"custom_sql": {"sql": "SELECT {{ var('nope') }}"}}))
    built = build_test_sql(parsed, "`m`")
    assert built.assertions[0].error is not None and "nope" in built.assertions[0].error
