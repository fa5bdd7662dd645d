"""How much warm-up ``streamt server start`` runs through a new server (``connect_server.warmup``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.spark.server_warmup import QUICK_ROUNDS, QUICK_ROWS, ROUNDS, ROWS, rounds
from dagster_streamt.spec.loader import load_project

from ..conftest import load, write_project


@pytest.mark.parametrize(("mode", "expected"), [
    ("quick", (QUICK_ROUNDS, QUICK_ROWS)), ("full", (ROUNDS, ROWS)), ("off", ((), 0)),
])
def test_rounds_follow_the_setting(mode: str, expected: tuple[tuple[str, ...], int]) -> None:
    assert rounds(mode) == expected
    assert len(ROUNDS) > len(QUICK_ROUNDS) and ROUNDS[0] == QUICK_ROUNDS[0] == "full"


def test_quick_is_the_default_and_a_wrong_value_is_located(tmp_path: Path) -> None:
    assert load(write_project(tmp_path / "a", {})).runtime.spark.connect_server.warmup == "quick"
    (tmp_path / "off").mkdir()  # unquoted `off` is YAML's false
    (tmp_path / "off" / "stream_project.yml").write_text(
        "project: {name: p}\nruntime:\n  spark:\n    connect_server: {warmup: off}\n")
    assert load(tmp_path / "off").runtime.spark.connect_server.warmup == "off"
    root = write_project(tmp_path / "b", {"runtime": {"spark": {"connect_server": {"warmup": "fast"}}}})
    project, diags = load_project(root)
    text = "\n".join(d.format() for d in diags.errors)
    assert project is None or diags.errors
    assert "stream_project.yml" in text and "warmup" in text and "quick" in text, text
