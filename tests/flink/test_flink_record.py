"""Flink's recorded answers (``tests/flink/results/``) are those of the current cases: a fast test, no JVM
(the data is generated and hashed, nothing runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cases import CASES
from .data import generate, write
from .harness import RESULTS, flink_python, recorded


def test_flinks_results_are_recorded_for_these_cases(tmp_path: Path) -> None:
    """The repository holds Flink's answer for the current cases, data, runner and Flink, and only that one:
    a change to a case without its new record would make every fresh machine run Flink again."""
    if flink_python() is None:
        pytest.skip("Apache Flink's venv is missing: run `bash scripts/flink_venv.sh` (scripts/setup-dev.sh runs it)")
    key = recorded(CASES, write(tmp_path, generate()))
    held = sorted(p.name for p in RESULTS.glob("*.jsonl.gz"))
    assert held == [key.name], (f"tests/flink/results/ holds {held}, the current inputs' record is {key.name}: "
                                "run tests/flink/test_flink_reference.py (it runs Flink and records it), commit that")
