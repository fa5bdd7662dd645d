"""streamt's `expression: {sql, description}` assertion runs per row on real Spark DataFrames: a row
where the condition is false or NULL fails it, as `expression_is_true` (streamt only checks its shape)."""

from __future__ import annotations

from typing import Any

import pytest

from .test_runner import counts, run

pytestmark = pytest.mark.spark


def test_expression_counts_false_and_null_rows(views: Any) -> None:
    r = run(views, {"expression": {"sql": "amount * qty >= 0", "description": "no negative line"}},
            {"expression": {"sql": "customer_id > 0"}}, {"expression": {"sql": "order_id > 0"}})
    same = run(views, {"expression_is_true": {"expression": "amount * qty >= 0"}},
               {"expression_is_true": {"expression": "customer_id > 0"}})
    assert counts(r) == [(False, 1), (False, 2), (True, 0)] and counts(r)[:2] == counts(same)
    assert "no negative line" in r.assertions[0].message or "no negative line" in str(r.assertions[0])
