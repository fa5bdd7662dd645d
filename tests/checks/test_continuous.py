"""Continuous tests: the violations of one micro-batch, and per-batch aggregate evaluation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dagster_streamt.checks.assertions import parse_assertions
from dagster_streamt.checks.continuous import VIOLATIONS_SCHEMA, evaluate_batch, evaluation_mode, violations_frame
from dagster_streamt.checks.kinds import StreamProgress
from dagster_streamt.spec.models import Test as SpecTest

from .conftest import ORDERS, ORDERS_SCHEMA, at

pytestmark = pytest.mark.spark

CONTINUOUS = SpecTest(name="orders_live", model="orders", type="continuous", assertions=[
    {"not_null": {"columns": ["customer_id"]}},
    {"accepted_values": {"column": "status", "values": ["paid", "shipped"]}},
    {"range": {"column": "amount", "min": 0}},
    {"expression_is_true": {"expression": "qty < 5"}},
    {"custom_sql": {"where": "amount > 500"}},
    {"unique": {"columns": ["order_id"]}},
    {"relationships": {"column": "customer_id", "to": 'ref("customers")', "field": "id"}},
    {"row_count": {"max": 3}},
    {"throughput": {"min_per_second": 1}},
])


def resolve(kind: str, name: str) -> str:
    return "`chk_customers`"


def test_modes() -> None:
    parsed, _ = parse_assertions(CONTINUOUS)
    assert [evaluation_mode(a) for a in parsed] == ["row"] * 7 + ["batch", "progress"]


def test_violations_frame_for_a_batch(views: Any) -> None:
    batch = views.createDataFrame(ORDERS, ORDERS_SCHEMA)
    out = violations_frame(batch, CONTINUOUS, 7, at(3, 0), resolve=resolve)
    assert out.schema.simpleString() == "struct<" + ",".join(
        f"{c.split()[0]}:{c.split()[1]}" for c in VIOLATIONS_SCHEMA.split(", ")) + ">"
    rows = out.collect()
    got = sorted((json.loads(r.record)["order_id"], r.assertion, r.violation) for r in rows)
    assert got == sorted([
        (3, "not_null", "null_value"), (3, "unique", "duplicate_key"),  # order 3, first copy
        (3, "accepted_values", "unaccepted_value"), (3, "range", "out_of_range"), (3, "unique", "duplicate_key"),
        (3, "relationships", "missing_reference"),  # order 3, second copy (customer 12 unknown)
        (5, "not_null", "null_value"), (5, "expression_is_true", "expression_false"), (5, "custom_sql", "custom_sql"),
    ])
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.assertion] = counts.get(r.assertion, 0) + 1
    assert counts == {"not_null": 2, "accepted_values": 1, "range": 1, "expression_is_true": 1, "custom_sql": 1,
                      "unique": 2, "relationships": 1}
    assert {r.test for r in rows} == {"orders_live"} and {r.batch_id for r in rows} == {7}
    assert {r.detected_at.astimezone().isoformat() for r in rows} == {at(3, 0).astimezone().isoformat()}


def test_relationships_need_a_static_relation(views: Any) -> None:
    batch = views.createDataFrame(ORDERS, ORDERS_SCHEMA)
    with pytest.raises(ValueError, match="needs `resolve`"):
        violations_frame(batch, CONTINUOUS, 1)


def test_clean_batch_has_no_violations(views: Any) -> None:
    batch = views.createDataFrame([ORDERS[0]], ORDERS_SCHEMA)
    assert violations_frame(batch, CONTINUOUS, 1, resolve=resolve).count() == 0


def test_evaluate_batch_runs_aggregates_per_micro_batch(views: Any) -> None:
    batch = views.createDataFrame(ORDERS, ORDERS_SCHEMA)
    result = evaluate_batch(batch, CONTINUOUS, 3, resolve=resolve)
    by_label = {a.label: a for a in result.assertions}
    assert "throughput" not in by_label  # judged from progress, not from a batch
    assert (by_label["row_count"].passed, by_label["row_count"].failing_rows) == (False, 3)
    assert by_label["unique"].failing_rows == 1 and by_label["not_null"].failing_rows == 2
    with_progress = evaluate_batch(batch, CONTINUOUS, 3, resolve=resolve, progress=StreamProgress(rows_per_second=5))
    assert {a.label: a.passed for a in with_progress.assertions}["throughput"] is True
