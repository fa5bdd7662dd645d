"""streamt's own test suite as ours: the projects its unit and scenario tests build, with streamt's
verdict on each (tests/compat/streamt_suite, Apache-2.0, see its NOTICE.md).

Each case agrees with streamt (errors or not, DAG edges and order, inferred materializations, the
STREAMT_ENV warning), or differs on purpose with the compatibility note that says why
(``spark_notes.yml``; a materialization Spark infers as ``table`` names its reason).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.compat.streamt_suite import replay

CASES = replay.case_ids()
# agree: same verdict; note: differs where a compatibility note says why; stricter: we reject on purpose
EXPECTED = {"agree": 170, "note": 32, "stricter": 2}


@pytest.mark.parametrize("case_id", CASES)
def test_case_agrees_with_streamt(case_id: str, tmp_path: Path) -> None:
    kind, problems = replay.verdict(case_id, replay.run(replay.read_case(case_id), tmp_path))
    assert kind != "differ", "\n".join(problems)


def test_tally(tmp_path: Path) -> None:
    tally: Counter[str] = Counter()
    for i, case_id in enumerate(CASES):
        kind, _ = replay.verdict(case_id, replay.run(replay.read_case(case_id), tmp_path / str(i)))
        tally[kind] += 1
    assert dict(tally) == EXPECTED
    assert len(CASES) == sum(EXPECTED.values()) == 204


def test_every_note_case_exists() -> None:
    assert set(replay.spark_notes()) <= set(CASES)
