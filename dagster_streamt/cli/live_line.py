"""One self-updating status line under ``streamt run``'s output while models run: which models are in
flight, for how long, and for streams the rows and micro-batches so far. Only on a terminal: piped
or redirected output (CI logs, ``> file``) gets the finished lines and nothing else."""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TextIO

import click

TICK_S = 0.5


def describe(model: str, kind: str, elapsed_s: float, rows: int | None, batches: int | None) -> str:
    text = f"{model} ({kind}) {elapsed_s:.0f} s"
    if rows is not None and batches is not None:
        text += f", {rows:,} rows in {batches} batch{'es' if batches != 1 else ''}"
    return text


class LiveLine:
    """Redraws the status line every ``TICK_S``; :meth:`echo` prints a finished line above it."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._shown = False
        self._thread = threading.Thread(target=self._loop, name="streamt-live-line", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._clear()

    def echo(self, message: str) -> None:
        with self._lock:
            self._clear()
            click.echo(message, file=self._out)

    def _clear(self) -> None:
        if self._shown:
            self._out.write("\r\033[K")
            self._out.flush()
            self._shown = False

    def _loop(self) -> None:
        from ..spark.run.live import snapshot

        while not self._stop.wait(TICK_S):
            now = snapshot()
            width = max(20, shutil.get_terminal_size((100, 20)).columns - 1)
            text = "  … " + "; ".join(describe(r.model, r.kind, r.elapsed_s, r.rows, r.batches) for r in now)
            with self._lock:
                self._clear()
                if now:
                    self._out.write(text[:width])
                    self._out.flush()
                    self._shown = True


@contextmanager
def live_line(enabled: bool = True, out: TextIO | None = None) -> Iterator[LiveLine | None]:
    """A :class:`LiveLine` when ``out`` (default stdout) is a terminal and ``enabled``; else None."""
    stream = out or sys.stdout
    if not enabled or not stream.isatty():
        yield None
        return
    from ..spark.run.live import watch

    line = LiveLine(stream)
    with ExitStack() as stack:
        stack.enter_context(watch())
        line.start()
        stack.callback(line.stop)
        yield line
