"""What is running right now, for a live progress line: the models in flight with their start time
and, for streaming queries, the rows and micro-batches so far (from the query's progress reports).

The runner marks models as they start and end; streaming materializers wait on their query through
:func:`await_query`, which, while somebody :func:`watch`\\ es, follows the query: Spark pushes each
micro-batch's progress to a ``StreamingQueryListener`` (one per session, added the first time one is
watched), nothing is polled. Nobody watching (a non-terminal ``streamt run``, a Dagster run from the
UI): a plain ``awaitTermination()``. Plain data; pyspark is imported only to listen."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .progress import input_rows

_LISTENER = "_streamt_progress_listener"  # the session's listener, kept on the session object itself


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
        self._followed: dict[str, tuple[str, dict[int, Any]]] = {}  # query name -> (model, progress by batch)

    def start(self, model: str, kind: str) -> None:
        with self._lock:
            self._running[model] = (kind, time.monotonic(), None, None)

    def end(self, model: str) -> None:
        with self._lock:
            self._running.pop(model, None)

    def stream(self, model: str, rows: int, batches: int) -> None:
        with self._lock:
            self._stream(model, rows, batches)

    def _stream(self, model: str, rows: int, batches: int) -> None:
        if model in self._running:
            kind, since, _, _ = self._running[model]
            self._running[model] = (kind, since, rows, batches)

    def follow(self, query: str, model: str, progresses: list[Any]) -> None:
        """Count ``query``'s micro-batches for ``model``, with ``progresses`` it reported already (each
        batch counted once, whether it came from them or from the listener)."""
        with self._lock:
            batches = self._followed.setdefault(query, (model, {}))[1]
            for p in progresses:
                batches.setdefault(int(p.batchId), p)
            self._count(query)

    def progress(self, progress: Any) -> None:
        """One micro-batch's report (from the listener): counted when its query is followed."""
        with self._lock:
            if progress.name in self._followed:
                self._followed[progress.name][1][int(progress.batchId)] = progress  # a replayed batch once
                self._count(progress.name)

    def unfollow(self, query: str) -> None:
        with self._lock:
            self._followed.pop(query, None)

    def _count(self, query: str) -> None:
        model, batches = self._followed[query]
        progresses = [batches[b] for b in sorted(batches)]
        self._stream(model, input_rows(progresses), sum(1 for p in progresses if int(p.numInputRows or 0) > 0))

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


def await_query(spark: Any, query: Any, model: str) -> None:
    """``query.awaitTermination()`` (a query started in ``spark``), with rows and batches so far on the
    board while someone watches."""
    if not BOARD.watched:
        query.awaitTermination()
        return
    _listen(spark)
    BOARD.follow(query.name, model, [])  # from now on the listener's reports count ...
    BOARD.follow(query.name, model, list(query.recentProgress))  # ... and so do those from before
    try:
        query.awaitTermination()
    finally:
        BOARD.unfollow(query.name)


def _listen(spark: Any) -> None:
    """Add the board's listener to ``spark`` once (a session's listeners live as long as it does)."""
    if getattr(spark, _LISTENER, None) is not None:
        return
    from pyspark.sql.streaming import StreamingQueryListener

    class Progress(StreamingQueryListener):
        """Spark's progress events, pushed after each micro-batch: onto the board."""

        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            BOARD.progress(event.progress)

        def onQueryTerminated(self, event: Any) -> None:
            pass

    listener = Progress()
    spark.streams.addListener(listener)
    setattr(spark, _LISTENER, listener)
