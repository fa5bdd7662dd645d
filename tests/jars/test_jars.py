"""Jar sets: the policy in force, the cache's completeness stamp, the conf a project's sessions get, the
CLI; and, with a JVM, a real resolution by Spark's Ivy into an empty cache and what the machine's cache
holds (nothing pyspark bundles)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dagster_streamt.cli.main import cli
from dagster_streamt.jars import fetch, sets
from dagster_streamt.jars.sets import JarsUnavailable
from dagster_streamt.spark.errors import SparkSetupError
from dagster_streamt.spark.session.session_jars import CATALOG, EXTENSION, needed_sets, session_jars, uses_delta
from dagster_streamt.spark.session.settings import SparkSettings, session_conf


def _fake(jar_set: sets.JarSet, names: list[str], stamp: str | None = None) -> Path:
    folder = fetch.folder(jar_set)
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_bytes(b"")
    (folder / fetch.MARKER).write_text((stamp or jar_set.stamp) + "\n")
    return folder


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("STREAMT_JARS", raising=False)
    return tmp_path / "xdg" / "dagster-streamt" / "jars"


def test_the_policy_is_the_machines_then_the_projects_then_fetch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STREAMT_JARS", raising=False)
    assert fetch.policy() == "fetch" and fetch.policy("provided") == "provided"
    monkeypatch.setenv("STREAMT_JARS", "cache")
    assert fetch.policy("fetch") == "cache"
    monkeypatch.setenv("STREAMT_JARS", "never")
    with pytest.raises(JarsUnavailable, match=r"STREAMT_JARS='never' .*fetch, cache, provided"):
        fetch.policy()


def test_a_folder_counts_only_complete_and_for_the_same_coordinates(empty_cache: Path) -> None:
    delta = sets.delta("4.2.0")
    assert fetch.cached(delta) is None
    folder = _fake(delta, ["io.delta_delta-storage-4.4.0.jar", "io.delta_delta-spark_4.2_2.13-4.4.0.jar"],
                   stamp="an older resolution")
    assert folder == empty_cache / "delta-4.4.0-spark-4.2.0"
    assert fetch.cached(delta) is None  # other coordinates or exclusions: resolved again
    (folder / fetch.MARKER).write_text(delta.stamp)
    assert [p.name for p in fetch.cached(delta) or []] == ["io.delta_delta-spark_4.2_2.13-4.4.0.jar",
                                                            "io.delta_delta-storage-4.4.0.jar"]
    assert sets.delta("4.2.0", "4.5.0").stamp != delta.stamp


def test_without_downloads_a_missing_set_names_the_fetch_command(empty_cache: Path) -> None:
    with pytest.raises(JarsUnavailable) as caught:
        fetch.jars_for(sets.kafka("4.2.0"), "cache")
    message = str(caught.value)
    assert str(empty_cache / "spark-kafka-4.2.0") in message and "`streamt jars fetch kafka`" in message


def test_sessions_get_delta_and_the_users_own_jars_first(empty_cache: Path, tmp_project: Any) -> None:
    project = tmp_project({"models": [{"name": "t", "sql": "SELECT 1 AS x"}]})
    folder = _fake(sets.delta(), ["io.delta_delta-spark_4.2_2.13-4.4.0.jar", "io.delta_delta-storage-4.4.0.jar"])
    conf = session_jars(project, {"spark.jars": "/x/pg.jar", "spark.sql.extensions": "my.Ext"})
    assert conf["spark.jars"].split(",") == ["/x/pg.jar", str(folder / "io.delta_delta-spark_4.2_2.13-4.4.0.jar"),
                                            str(folder / "io.delta_delta-storage-4.4.0.jar")]
    assert conf["spark.sql.extensions"] == f"my.Ext,{EXTENSION}" and conf["spark.sql.catalog.spark_catalog"] == CATALOG
    own = {"spark.jars.packages": "io.delta:delta-spark_4.2_2.13:4.4.0", "spark.sql.catalog.spark_catalog": "x.Y"}
    kept = session_jars(project, own)  # the user's own Delta and catalog win
    assert "spark.jars" not in kept and kept["spark.sql.catalog.spark_catalog"] == "x.Y"
    assert session_jars(project, kept) == kept  # applying twice changes nothing


def test_provided_adds_no_jar_and_cache_fails_only_where_delta_is_stored(empty_cache: Path, tmp_project: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    views = tmp_project({"models": [{"name": "v", "materialized": "view", "sql": "SELECT 1 AS x"}]}, name="views")
    tables = tmp_project({"runtime": {"spark": {"jars": "provided"}},
                          "models": [{"name": "t", "materialized": "table", "sql": "SELECT 1 AS x"}]}, name="tables")
    assert not uses_delta(views) and uses_delta(tables)
    conf = session_conf(tables, SparkSettings.from_project(tables))  # the platform ships Delta: conf, no jars
    assert "spark.jars" not in conf and conf["spark.sql.extensions"] == EXTENSION
    monkeypatch.setenv("STREAMT_JARS", "cache")  # a machine's rule wins over the project's `provided`
    with pytest.raises(SparkSetupError, match=r"Delta Lake .*`streamt jars fetch delta`"):
        session_conf(tables, SparkSettings.from_project(tables))
    conf = session_conf(views, SparkSettings.from_project(views))  # views only: no Delta, no extension
    assert "spark.jars" not in conf and "spark.sql.extensions" not in conf


def test_a_kafka_project_needs_the_connectors(tmp_project: Any) -> None:
    kafka = tmp_project({"runtime": {"kafka": {"bootstrap_servers": "127.0.0.1:9"}},
                         "sources": [{"name": "s", "topic": "t", "columns": [{"name": "x"}]}],
                         "models": [{"name": "m", "sql": 'SELECT x FROM {{ source("s") }}'}]})
    assert [s.key for s in needed_sets(kafka)] == ["delta", "kafka"]


def test_the_cli_lists_sets_and_refuses_a_fetch_without_a_project(empty_cache: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["jars", "list", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    doc = json.loads(listed.output)
    assert doc["policy"] == "fetch" and [s["name"] for s in doc["sets"]] == ["delta", "kafka", "s3", "broker"]
    assert not any(s["cached"] for s in doc["sets"])
    assert doc["sets"][3]["packages"][0] == f"org.apache.kafka:kafka_2.13:{sets.KAFKA_VERSION}"
    refused = runner.invoke(cli, ["jars", "fetch", "-p", str(tmp_path)])
    assert refused.exit_code == 2 and "no stream_project.yml" in refused.output


def test_kafka_start_without_jars_or_downloads_says_how_to_fetch(empty_cache: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMT_JARS", "cache")
    result = CliRunner().invoke(cli, ["kafka", "start", "--dir", str(tmp_path / "k"), "--port", "0"])
    assert result.exit_code == 1
    assert "streamt jars fetch broker" in result.output and "Traceback" not in result.output


@pytest.mark.spark
def test_spark_ivy_resolves_a_set_once_into_an_empty_cache(empty_cache: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """From Maven Central (or the machine's ~/.m2) through Spark's own Ivy, in a fresh Ivy home: exactly
    delta-spark and delta-storage; then from the cache without a JVM; an unknown version is a located error."""
    ivy = {"spark.jars.ivy": str(tmp_path / "ivy")}
    lines: list[str] = []
    jars = fetch.jars_for(sets.delta(), "fetch", ivy, lines.append)
    assert [j.name for j in jars] == ["io.delta_delta-spark_4.2_2.13-4.4.0.jar", "io.delta_delta-storage-4.4.0.jar"]
    assert all(j.parent == empty_cache / sets.delta().folder and j.stat().st_size > 10_000 for j in jars)
    assert lines[0].startswith("streamt: fetching Delta Lake 4.4.0") and "2 jars in" in lines[1]

    def no_resolution(*_: Any) -> Any:
        raise AssertionError("a cached set must not be resolved again")

    monkeypatch.setattr(fetch, "_ivy_resolve", no_resolution)
    assert fetch.jars_for(sets.delta(), "fetch", ivy) == jars
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with pytest.raises(JarsUnavailable, match=r"could not resolve Delta Lake 9\.9\.9 .*delta-spark_4\.2_2\.13;9\.9\.9"):
        fetch.jars_for(sets.delta(delta_version="9.9.9"), "fetch", ivy, lines.append)
    assert not (empty_cache / "delta-9.9.9-spark-4.2.0").exists()


@pytest.mark.parametrize("key", ["delta", "kafka", "s3"])
def test_the_machines_cache_holds_nothing_pyspark_bundles(key: str) -> None:
    """What `streamt jars fetch --all` left for the installed pyspark never repeats a jar of pyspark's own
    folder (at any version), and holds what pyspark lacks."""
    jar_set = sets.SETS[key]()
    found = fetch.cached(jar_set)
    if found is None:
        pytest.skip(f"{jar_set.what} is not cached: `streamt jars fetch {key}`")
    stems = {fetch.artifact(p.name) for p in found}
    bundled = {fetch.artifact(name) for name in os.listdir(sets.pyspark_jars_dir())}
    assert not {s for s in stems for b in bundled if s == b or s.endswith(f"_{b}")}
    expected = {"delta": {"io.delta_delta-spark_4.2_2.13", "io.delta_delta-storage"},
                "kafka": {"org.apache.spark_spark-sql-kafka-0-10_2.13", "org.apache.spark_spark-avro_2.13",
                          "org.apache.spark_spark-token-provider-kafka-0-10_2.13", "org.apache.kafka_kafka-clients",
                          "org.apache.commons_commons-pool2"},
                "s3": {"org.apache.hadoop_hadoop-aws", "software.amazon.awssdk_s3", "software.amazon.awssdk_sts"}}[key]
    assert expected <= stems
