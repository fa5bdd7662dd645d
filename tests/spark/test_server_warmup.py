"""How much warm-up a new project server runs (``STREAMT_SERVER_WARMUP``)."""

from __future__ import annotations

import pytest

from dagster_streamt.spark.server_warmup import QUICK_ROUNDS, QUICK_ROWS, ROUNDS, ROWS, rounds


@pytest.mark.parametrize(("value", "expected"), [
    (None, (ROUNDS, ROWS)), ("full", (ROUNDS, ROWS)), ("Quick", (QUICK_ROUNDS, QUICK_ROWS)),
    ("off", ((), 0)), ("0", ((), 0)), ("no", ((), 0)), ("something else", (ROUNDS, ROWS)),
])
def test_rounds_follow_the_environment(monkeypatch: pytest.MonkeyPatch, value: str | None,
                                       expected: tuple[tuple[str, ...], int]) -> None:
    if value is None:
        monkeypatch.delenv("STREAMT_SERVER_WARMUP", raising=False)
    else:
        monkeypatch.setenv("STREAMT_SERVER_WARMUP", value)
    assert rounds() == expected
    assert len(ROUNDS) > len(QUICK_ROUNDS) and ROUNDS[0] == QUICK_ROUNDS[0] == "full"
