"""Fixtures shared by the Spark mode tests (test_cluster.py, test_spark_modes.py)."""

from __future__ import annotations

from typing import Any

import pytest

from ..conftest import run_here
from .test_cluster import _project, _snapshot


@pytest.fixture(scope="session")
def embedded_example(shared_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Any, ...]]]:
    """The example's stored tables after an embedded ``streamt run``: what every other Spark mode must give
    (one run for all of them). It runs in this process on the shared session: what is compared is the
    stored rows, and the other modes' runs are whole processes."""
    spark = shared_spark
    root = _project(tmp_path_factory.mktemp("modes"), "embedded")
    done = run_here(spark, "run", "-p", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    snapshot = _snapshot(spark, root)
    assert {"orders_clean", "customer_orders", "order_metrics"} <= set(snapshot)
    assert all(snapshot[m] for m in ("orders_clean", "customer_orders", "order_metrics"))
    return snapshot
