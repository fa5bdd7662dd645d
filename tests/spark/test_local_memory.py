"""A local session's heap is a quarter of the machine (Spark's 1g ran the suite's shared session out of
memory), the project's own ``spark.driver.memory`` wins, and with the UI off Spark keeps short records."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark.session import local_memory
from dagster_streamt.spark.session.local_memory import NO_UI_RETENTION, local_driver_memory, machine_memory_bytes
from dagster_streamt.spark.session.settings import SparkSettings, session_conf

from ..conftest import load, write_project


def _conf(tmp_path: Path, spark: dict[str, Any] | None = None, **overrides: Any) -> dict[str, str]:
    config = {"runtime": {"spark": spark}} if spark else {}
    project = load(write_project(tmp_path / "p", config))
    return session_conf(project, SparkSettings.from_project(project, **overrides))


def test_the_examples_run() -> None:
    failed, tried = doctest.testmod(local_memory, raise_on_error=False)
    assert tried >= 2 and failed == 0


def test_a_quarter_of_the_machine_at_least_spark_s_default() -> None:
    assert local_driver_memory(64 * 1024**3) == "16384m"
    assert local_driver_memory(3 * 1024**3) == "1024m"  # Spark's own 1g is the floor
    assert local_driver_memory(0) == "1024m"  # unknown memory: Spark's default
    total = machine_memory_bytes()
    assert total is not None and total > 0
    assert local_driver_memory() == f"{max(1024, total // 4 // 1024**2)}m"


def test_local_sessions_get_it_and_the_project_wins(tmp_path: Path) -> None:
    local = _conf(tmp_path / "a")
    assert local["spark.driver.memory"] == local_driver_memory()
    assert local["spark.sql.sources.parallelPartitionDiscovery.parallelism"] == "2"  # local[2]: VACUUM's listing
    own = _conf(tmp_path / "b", {"conf": {"spark.driver.memory": "3g"}})
    assert own["spark.driver.memory"] == "3g"
    # A cluster's driver is sized by whoever runs the cluster: nothing is set for it.
    assert "spark.driver.memory" not in _conf(tmp_path / "c", master="spark://somewhere:7077")


def test_short_records_only_while_the_ui_is_off(tmp_path: Path) -> None:
    off = _conf(tmp_path / "a")
    assert all(off[k] == v for k, v in NO_UI_RETENTION.items())
    mine = _conf(tmp_path / "b", {"conf": {"spark.sql.ui.retainedExecutions": "7"}})
    assert mine["spark.sql.ui.retainedExecutions"] == "7"
    on = _conf(tmp_path / "c", {"conf": {"spark.ui.enabled": "true"}})
    assert not set(NO_UI_RETENTION) & set(on), "a UI the user turned on keeps Spark's own retention"


@pytest.mark.spark
def test_the_shared_session_runs_with_that_heap(spark: Any) -> None:
    """The suite's own session is a local session with the shipped defaults: its JVM has the heap."""
    expected = int(local_driver_memory()[:-1]) * 1024**2
    jvm_max = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
    assert 0.9 * expected <= jvm_max <= 1.01 * expected  # the JVM rounds to its heap regions
    assert spark.conf.get("spark.sql.ui.retainedExecutions") == NO_UI_RETENTION["spark.sql.ui.retainedExecutions"]
