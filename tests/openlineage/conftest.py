"""Fixtures: the example project loaded without touching its caches, and small projects on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagster_streamt.api import LoadedProject, load
from dagster_streamt.lineage.column_types import ProjectColumnLineage
from dagster_streamt.lineage.project_columns import column_lineage

EXAMPLE = Path(__file__).resolve().parents[2] / "project"
MakeProject = Callable[..., LoadedProject]


@pytest.fixture(scope="session")
def example() -> LoadedProject:
    loaded = load(EXAMPLE, use_cache=False)  # no writes into the shared example's target/
    assert not loaded.errors, [d.format() for d in loaded.errors]
    return loaded


@pytest.fixture(scope="session")
def example_columns(example: LoadedProject) -> ProjectColumnLineage:
    return column_lineage(example, use_cache=False)


@pytest.fixture
def make_project(tmp_path: Path) -> MakeProject:
    """Write ``stream_project.yml`` from a dict (``project: {name: t}`` added) and load it."""

    def make(config: dict[str, Any], name: str = "proj") -> LoadedProject:
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        doc = {"project": {"name": "t"}, **config}
        (root / "stream_project.yml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        loaded = load(root, use_cache=False)
        assert not loaded.errors, [d.format() for d in loaded.errors]
        return loaded

    return make
