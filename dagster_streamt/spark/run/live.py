"""What is running right now, for a live progress line: the models in flight with their start time
and, for streaming queries, the rows and micro-batches so far (from the query's progress reports).

The runner marks models as they start and end; streaming materializers wait on their query through
:func:`await_query`, which, while somebody :func:`watch`\\ es, reads the query's progress every
half second. Nobody watching (a non-terminal ``streamt run``, a Dagster run from the UI): a plain
``awaitTermination()``, nothing polled. Plain data; no pyspark import."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .progress import input_rows

POLL_S = 0.5


@dataclass(frozen=True)
class Running:
    model: str
    kind: str  # table | view | stream | sink
    elapsed_s: float
    rows: int | None = None  # streams: input rows processed so far
    batches: int | None = None  # streams: micro-batches that carried data so far


class _Board:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, tuple[str, float, int | None, int | None]] = {}
        self._watchers = 0

    def start(self, model: str, kind: str) -> None:
        with self._lock:
            self._running[model] = (kind, time.monotonic(), None, None)

    def end(self, model: str) -> None:
        with self._lock:
            self._running.pop(model, None)

    def stream(self, model: str, rows: int, batches: int) -> None:
        with self._lock:
            if model in self._running:
                kind, since, _, _ = self._running[model]
                self._running[model] = (kind, since, rows, batches)

    @property
    def watched(self) -> bool:
        return self._watchers > 0

    def watch(self, delta: int) -> None:
        with self._lock:
            self._watchers += delta

    def snapshot(self) -> list[Running]:
        now = time.monotonic()
        with self._lock:
            items = sorted(self._running.items(), key=lambda kv: (kv[1][1], kv[0]))
        return [Running(m, kind, now - since, rows, batches) for m, (kind, since, rows, batches) in items]


BOARD = _Board()


@contextmanager
def running(model: str, kind: str) -> Iterator[None]:
    """Mark ``model`` as in flight for the duration of the block."""
    BOARD.start(model, kind)
    try:
        yield
    finally:
        BOARD.end(model)


@contextmanager
def watch() -> Iterator[None]:
    """While open, streaming queries report their progress to the board."""
    BOARD.watch(1)
    try:
        yield
    finally:
        BOARD.watch(-1)


def snapshot() -> list[Running]:
    """The models in flight, oldest first."""
    return BOARD.snapshot()


def await_query(query: Any, model: str) -> None:
    """``query.awaitTermination()``, recording rows and batches so far while someone watches."""
    if not BOARD.watched:
        query.awaitTermination()
        return
    while not query.awaitTermination(POLL_S):
        progresses = query.recentProgress
        batches = sum(1 for p in progresses if int(p.numInputRows or 0) > 0)
        BOARD.stream(model, input_rows(progresses), batches)
