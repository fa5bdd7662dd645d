"""Test files in an order that keeps both xdist workers busy: the ``slow`` files spread evenly among
the others, and the run ending on light files.

With ``--dist loadfile`` each worker takes the next whole file in collection order. The ``slow`` files
(crash tests, servers, clusters, the wheel) start processes of their own and hold about half of the
suite's time; in plain path order they gather at the end (``tests/spark/``, ``tests/test_package.py``),
where they run against each other on two cores and the last of them leaves the other worker idle. Spread
out, one worker mostly runs a slow file while the other runs in-process files. The order of tests
inside a file is unchanged; which tests run is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pytest


def spread(files: list[str], heavy: Iterable[str], tail: float = 0.15) -> list[str]:
    """``files`` with the ``heavy`` ones spread evenly among the rest, each group in its own order,
    and the last ``tail`` of the light files kept for the end (the other worker's work while the last
    slow file runs).

    >>> spread(["a", "b", "c", "d", "e", "f", "g", "H1", "H2"], {"H1", "H2"}, tail=0.3)
    ['a', 'b', 'H1', 'c', 'd', 'H2', 'e', 'f', 'g']
    >>> spread(["a", "b"], set())
    ['a', 'b']
    """
    heavy = set(heavy)
    light = [f for f in files if f not in heavy]
    slow = [f for f in files if f in heavy]
    if not slow:
        return list(files)
    body = len(light) - math.ceil(len(light) * tail)
    step = body / len(slow)
    out: list[str] = []
    taken = 0
    for i, name in enumerate(slow):
        until = math.floor(step * (i + 1) + 1e-9)
        out.extend(light[taken:until])
        taken = max(taken, until)
        out.append(name)
    out.extend(light[taken:])
    return out


@pytest.hookimpl(trylast=True)  # after --changed (tests/changed.py) has chosen the tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    by_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(str(item.path), []).append(item)
    heavy = {f for f, its in by_file.items() if any(i.get_closest_marker("slow") for i in its)}
    items[:] = [item for f in spread(list(by_file), heavy) for item in by_file[f]]
