"""Tiny DataFrames registered as temp views on the shared session (tests/conftest.py ``spark``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

ORDERS_SCHEMA = "order_id bigint, customer_id bigint, status string, amount double, ts timestamp, qty int"


def at(day: int, hour: int) -> datetime:
    return datetime(2024, 1, day, hour, tzinfo=UTC)


ORDERS = [
    (1, 10, "paid", 5.0, at(1, 10), 1),
    (2, 11, "shipped", 50.0, at(1, 11), 2),
    (3, None, "paid", 100.0, at(1, 12), 3),
    (3, 12, "bogus", -1.0, None, 4),
    (5, None, None, 1000.0, at(2, 0), 7),
    (6, 10, "paid", 20.0, at(1, 9), 2),
]


@pytest.fixture(scope="session")
def views(shared_spark: Any) -> Iterator[Any]:
    """`chk_orders` (6 rows, see ORDERS) and `chk_customers` (ids 10 and 11)."""
    spark = shared_spark
    spark.createDataFrame(ORDERS, ORDERS_SCHEMA).createOrReplaceTempView("chk_orders")
    spark.createDataFrame([(10, "ann"), (11, "bob")], "id bigint, name string").createOrReplaceTempView(
        "chk_customers")
    yield spark
    spark.catalog.dropTempView("chk_orders")
    spark.catalog.dropTempView("chk_customers")
