"""Cross-process locks with ``flock``: held by an open file, released when it closes (also when the
process dies), and conflicting between two opens even inside one process (two threads)."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from ..errors import ModelRunError


class LockBusy(ModelRunError):
    """Another process or thread holds the lock."""


class FileLock:
    """``with FileLock(path, busy_message=...)`` fails fast with ``LockBusy``; ``wait=True`` blocks."""

    def __init__(self, path: Path, *, busy_message: str = "", wait: bool = False,
                 model: str | None = None) -> None:
        self.path = path
        self.busy_message = busy_message
        self.wait = wait
        self.model = model
        self._fh: IO[str] | None = None

    def __enter__(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # held open while locked
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | (0 if self.wait else fcntl.LOCK_NB))
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise LockBusy(f"{self.busy_message} (lock {self.path} held by {holder})", self.model) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
