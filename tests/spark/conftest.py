"""Fixtures shared by the Spark mode tests (test_cluster.py, test_spark_modes.py)."""

from __future__ import annotations

from typing import Any

import pytest

from .test_cluster import _project, _run, _snapshot


@pytest.fixture(scope="session")
def embedded_example(shared_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Any, ...]]]:
    """The example's stored tables after an embedded ``streamt run``: what every other Spark mode must give
    (one run for all of them)."""
    spark = shared_spark
    root = _project(tmp_path_factory.mktemp("modes"), "embedded")
    _run(root)
    snapshot = _snapshot(spark, root)
    assert {"orders_clean", "customer_orders", "order_metrics"} <= set(snapshot)
    assert all(snapshot[m] for m in ("orders_clean", "customer_orders", "order_metrics"))
    return snapshot
