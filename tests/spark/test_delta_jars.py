"""Delta's jars come from the jar cache scripts/setup.sh fills; every session gets them with Delta's SQL
extension and catalog (after the user's own settings); a project that stores Delta and finds no jars is
told which command fetches them. No JVM here."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import delta_jars
from dagster_streamt.spark.errors import SparkSetupError
from dagster_streamt.spark.settings import SparkSettings, session_conf


def _fake_cache(root: Path, spark: str = "4.2.0") -> Path:
    folder = root / "dagster-streamt" / "jars" / f"delta-{delta_jars.DELTA_VERSION}-spark-{spark}"
    folder.mkdir(parents=True)
    for name in ("delta-spark_4.2_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"):
        (folder / name).write_bytes(b"")
    (folder / ".complete").write_text("done\n")
    return folder


def test_missing_jars_name_the_fetch_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(delta_jars.DeltaJarsMissing, match=r"bash scripts/setup\.sh.*mvn"):
        delta_jars.delta_jars("4.2.0")


def test_delta_conf_merges_after_the_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = _fake_cache(tmp_path)
    jars = [str(folder / "delta-spark_4.2_2.13-4.4.0.jar"), str(folder / "delta-storage-4.4.0.jar")]
    conf = delta_jars.with_delta({"spark.jars": "/x/pg.jar", "spark.sql.extensions": "my.Ext"}, "4.2.0")
    assert conf["spark.jars"] == ",".join(["/x/pg.jar", *jars])
    assert conf["spark.sql.extensions"] == f"my.Ext,{delta_jars.EXTENSION}"
    assert conf["spark.sql.catalog.spark_catalog"] == delta_jars.CATALOG
    own = {"spark.jars.packages": "io.delta:delta-spark_4.2_2.13:4.4.0", "spark.sql.catalog.spark_catalog": "x.Y"}
    kept = delta_jars.with_delta(own, "4.2.0")  # the user's own Delta and catalog win
    assert "spark.jars" not in kept and kept["spark.sql.catalog.spark_catalog"] == "x.Y"
    assert delta_jars.with_delta(kept, "4.2.0") == kept  # applying twice changes nothing


def test_a_project_storing_delta_needs_the_jars(tmp_path: Path, tmp_project: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    views = tmp_project({"models": [{"name": "v", "materialized": "view", "sql": "SELECT 1 AS x"}]}, name="views")
    tables = tmp_project({"models": [{"name": "t", "materialized": "table", "sql": "SELECT 1 AS x"}]}, name="tables")
    assert not delta_jars.uses_delta(views) and delta_jars.uses_delta(tables)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    assert "spark.sql.extensions" not in session_conf(views, SparkSettings.from_project(views))
    with pytest.raises(SparkSetupError, match="Delta Lake"):
        session_conf(tables, SparkSettings.from_project(tables))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _fake_cache(tmp_path, delta_jars.spark_version())
    for project in (views, tables):  # one session may serve both: Delta is on whenever it can be
        conf = session_conf(project, SparkSettings.from_project(project))
        assert conf["spark.sql.extensions"] == delta_jars.EXTENSION and "delta-storage" in conf["spark.jars"]


def _artifact(jar: str) -> str:
    return re.sub(r"-\d[0-9A-Za-z.]*(-[0-9A-Za-z.]+)?\.jar$", "", jar)


def test_the_real_cache_holds_delta_and_nothing_pyspark_bundles() -> None:
    import pyspark

    try:
        found = {_artifact(p.name) for p in delta_jars.delta_jars()}
    except delta_jars.DeltaJarsMissing as exc:
        pytest.skip(f"run `bash scripts/setup.sh` to fetch Delta's jars ({exc})")
    bundled = {_artifact(name) for name in os.listdir(Path(pyspark.__file__).parent / "jars")}
    assert found == {"delta-spark_4.2_2.13", "delta-storage"}
    assert found & bundled == set()
