"""A team's dagster-pyspark resource plugs into build_definitions: PySparkResource and
LazyPySparkResource both become our SparkResource with their spark_config under the project's
runtime.spark.conf (the project wins), and a real run's session gets that configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster_pyspark import LazyPySparkResource, PySparkResource

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.resources import SparkResource, as_spark_resource, keep_sessions_alive
from dagster_streamt.spark import Warehouse

from ..helpers import write_project

TZ = "spark.sql.session.timeZone"


def project(tmp_path: Path, runtime: str = "") -> Path:
    return write_project(tmp_path / "p", {
        "stream_project.yml": f"project: {{name: pys}}\n{runtime}",
        "models/m.yml": "models:\n  - name: tz\n    materialized: table\n    sql: SELECT current_timezone() AS tz\n",
    })


def test_spark_config_goes_under_the_project_conf(tmp_path: Path) -> None:
    team = PySparkResource(spark_config={"spark": {"executor": {"memory": "2g"}, "sql": {"shuffle": {"partitions": 3}}},
                                         "spark.eventLog.enabled": False, "spark.master": "spark://team:7077"})
    ours = as_spark_resource(team)
    assert isinstance(ours, SparkResource)
    assert ours.base_conf == {"spark.executor.memory": "2g", "spark.sql.shuffle.partitions": "3",
                              "spark.eventLog.enabled": "false", "spark.master": "spark://team:7077"}

    plain = load(project(tmp_path / "a")).project  # sets neither master nor conf
    settings = ours.settings(plain)
    assert settings.master == "spark://team:7077"  # the team's cluster, since the project names none
    assert settings.conf["spark.sql.shuffle.partitions"] == "3" and settings.conf["spark.executor.memory"] == "2g"
    assert "spark.master" not in settings.conf

    pinned = load(project(tmp_path / "b", "runtime:\n  spark:\n    master: local[1]\n"
                                         "    conf: {spark.sql.shuffle.partitions: '7'}\n")).project
    settings = ours.settings(pinned)
    assert settings.master == "local[1]" and settings.conf["spark.sql.shuffle.partitions"] == "7"  # project wins
    over = SparkResource(base_conf=ours.base_conf, conf={"spark.sql.shuffle.partitions": "9"}).settings(pinned)
    assert over.conf["spark.sql.shuffle.partitions"] == "9"  # run config wins over both

    lazy = as_spark_resource(LazyPySparkResource(spark_config={"spark.remote": "sc://cluster:15002"}))
    assert lazy.settings(plain).remote == "sc://cluster:15002" and lazy.settings(plain).mode == "connect"
    with pytest.raises(TypeError, match="dagster_pyspark PySparkResource / LazyPySparkResource, not dict"):
        as_spark_resource({"spark.master": "local"})  # type: ignore[arg-type]


def _run_tz(root: Path, resource: Any) -> str:
    defs = build_definitions(root, spark=resource)
    assert isinstance(defs.resources["spark"], SparkResource)
    with keep_sessions_alive():  # the test session stays up for the other tests
        result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert result.success
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    assert spark is not None
    location = Warehouse.for_project(load(root).project).table_location("tz")
    return str(spark.read.format("delta").load(str(location)).collect()[0]["tz"])


@pytest.mark.spark
def test_a_run_gets_the_pyspark_resources_conf(spark: Any, tmp_path: Path) -> None:
    try:
        root = project(tmp_path / "a")
        nested = PySparkResource(spark_config={"spark": {"sql": {"session": {"timeZone": "America/New_York"}}}})
        assert _run_tz(root, nested) == "America/New_York"
        assert _run_tz(root, LazyPySparkResource(spark_config={TZ: "Asia/Tokyo"})) == "Asia/Tokyo"
        pinned = project(tmp_path / "b", f"runtime:\n  spark:\n    conf: {{{TZ}: Europe/Paris}}\n")
        assert _run_tz(pinned, LazyPySparkResource(spark_config={TZ: "Asia/Tokyo"})) == "Europe/Paris"
    finally:
        spark.conf.set(TZ, "UTC")


@pytest.mark.spark
def test_a_run_leaves_running_a_session_it_did_not_start(spark: Any, tmp_path: Path) -> None:
    """A notebook's session (here the suite's) is reused by a run and left running for its owner; the
    resource's default (``keep_alive`` off) stops only a session the run started itself."""
    root = project(tmp_path)
    resource = SparkResource(project_dir=str(root))
    assert not resource.keep_alive
    with resource.session(load(root).project) as got:
        assert got.range(2).count() == 2
    assert spark.range(3).count() == 3  # still up: stopping it would fail this call
    job = build_definitions(root, spark=resource).resolve_implicit_global_asset_job_def()
    assert job.execute_in_process(instance=dg.DagsterInstance.ephemeral()).success
    assert spark.range(4).count() == 4
