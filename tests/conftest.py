"""Spark fixtures: one embedded SparkSession for the whole test session (a JVM start costs ~4 s), and
a factory for small throwaway projects on disk. Every test runs the shipped defaults: no switch here
turns a feature off for the suite."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagster_streamt.spec.loader import load_project
from dagster_streamt.spec.project import Project

pytest_plugins = ["tests.changed"]  # `pytest --changed`: only the tests a change reaches

POSTGRES_JAR = Path("/usr/share/java/postgresql.jar")
ProjectFactory = Callable[..., Project]


def load(root: Path) -> Project:
    project, diags = load_project(root)
    errors = [d.format() for d in diags.errors]
    assert project is not None and not errors, "\n".join(errors)
    return project


def write_project(root: Path, config: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    """Write ``stream_project.yml`` (``project:`` added when missing) and data files under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    config = {"project": {"name": "spark_test"}, **config}
    (root / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def spark(request: pytest.FixtureRequest, shared_spark: Any) -> Any:
    """The embedded session every Spark test shares; only for tests marked ``spark`` (the fast tier,
    ``-m "not spark"``, promises no JVM)."""
    if request.node.get_closest_marker("spark") is None:
        pytest.fail(f"{request.node.nodeid} uses a Spark session: mark it `@pytest.mark.spark`")
    return shared_spark


@pytest.fixture(scope="session")
def shared_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The embedded session every Spark test shares (with the PostgreSQL JDBC driver when installed)."""
    from dagster_streamt.spark import SparkSettings, create_session, stop_session

    project = load(write_project(tmp_path_factory.mktemp("session"), {}))
    conf = {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"}
    if POSTGRES_JAR.is_file():
        conf["spark.jars"] = str(POSTGRES_JAR)
    session = create_session(project, SparkSettings.from_project(project, master="local[2]", conf=conf))
    yield session
    stop_session(session)


@pytest.fixture
def tmp_project(tmp_path: Path) -> ProjectFactory:
    """``tmp_project(config, files, name="proj")`` writes a project folder and returns it loaded."""

    def make(config: dict[str, Any], files: dict[str, str] | None = None, name: str = "proj") -> Project:
        return load(write_project(tmp_path / name, config, files))

    return make
