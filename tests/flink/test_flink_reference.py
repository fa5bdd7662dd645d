"""Flink as the reference engine: every case of ``cases.py`` runs on Apache Flink and through our
translation on Spark over the same files, and both give the same multiset of rows (``harness.py``).

Flink runs once for all cases (one subprocess of the Flink venv, ~1 minute), Spark once for all cases
(one run of a project holding them, in the shared session), both at the same time. Flink's results are
recorded in ``tests/flink/results/`` under the key of everything they depend on (``harness._cache_file``):
a session whose cases, data, runner and Flink are unchanged reads them instead of running Flink again
(CI too); a change runs Flink and records its new answer, to be committed with the change. Spark always
runs. Without the venv the tests skip and say how to get it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .cases import CASES
from .data import generate, write
from .harness import (
    compare,
    flink_python,
    flink_results,
    report,
    run_spark,
    start_flink,
    write_cases,
    write_project,
)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def differences(shared_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    spark = shared_spark
    if flink_python() is None:
        pytest.skip("Apache Flink's venv is missing: run `bash scripts/flink_venv.sh` (scripts/setup-dev.sh runs it)")
    root = write_project(tmp_path_factory.mktemp("flink_reference"))
    records = generate()
    folders = write(root, records)
    write_cases(root, CASES)
    flink_process = start_flink(CASES, folders)  # Flink and Spark side by side
    ours = run_spark(spark, root, CASES)
    flink = flink_results(flink_process, CASES)
    diffs = {c.name: compare(c, flink[c.name], ours[c.name], records) for c in CASES}
    print(report(diffs))
    return diffs


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_spark_agrees_with_flink(differences: dict[str, str | None], name: str) -> None:
    assert differences[name] is None, differences[name]


def test_every_case_compares_rows(tmp_path: Path) -> None:
    """The cases are distinct models, and a windowed case names the column that closes its windows."""
    assert len({c.name for c in CASES}) == len(CASES)
    for case in CASES:
        if "TUMBLE" in case.sql or "HOP" in case.sql or "CUMULATE" in case.sql or "SESSION" in case.sql:
            assert case.closed is not None, case.name
