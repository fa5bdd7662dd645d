"""The order the suite's files run in (tests/spread.py): every file once, each group in its own order,
the slow files spread out and light files at the end."""

from __future__ import annotations

import doctest
import itertools

from . import spread as spread_module
from .spread import spread


def test_doctests() -> None:
    failed, tried = doctest.testmod(spread_module)
    assert tried >= 2 and failed == 0


def test_spread_keeps_every_file_and_each_groups_order() -> None:
    files = [f"light{i:02d}" for i in range(40)] + [f"slow{i}" for i in range(6)]
    heavy = {f for f in files if f.startswith("slow")}
    out = spread(files, heavy)
    assert sorted(out) == sorted(files)
    assert [f for f in out if f in heavy] == sorted(heavy)
    assert [f for f in out if f not in heavy] == [f for f in files if f not in heavy]
    slow_at = [i for i, f in enumerate(out) if f in heavy]
    assert min(b - a for a, b in itertools.pairwise(slow_at)) >= 5  # never two slow files in a row
    assert out[-6:] == [f"light{i:02d}" for i in range(34, 40)]  # the last 15 % of light files end the run


def test_all_slow_or_none() -> None:
    assert spread(["a", "b"], {"a", "b"}) == ["a", "b"]
    assert spread([], set()) == []
