"""The one atomic file write: readers see the old content or the new, never half of it.

A unique temporary name in the target's folder (so concurrent writers never share one), then
``os.replace`` (rename(2), atomic on one filesystem). ``durable`` adds an fsync for state whose
loss would be wrong rather than merely slower (the warehouse's version pointers); ``private``
makes the file owner-only (caches that may hold interpolated secrets).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload


@overload
def atomic_writer(path: Path, mode: Literal["w"] = "w", *, durable: bool = False,
                  private: bool = False) -> AbstractContextManager[TextIO]: ...
@overload
def atomic_writer(path: Path, mode: Literal["wb"], *, durable: bool = False,
                  private: bool = False) -> AbstractContextManager[BinaryIO]: ...


def atomic_writer(path: Path, mode: Literal["w", "wb"] = "w", *, durable: bool = False,
                  private: bool = False) -> AbstractContextManager[IO[Any]]:
    """A context manager yielding an open file; the target appears only when the block succeeds."""
    return _open(Path(path), mode, durable, private)


@contextmanager
def _open(path: Path, mode: str, durable: bool, private: bool) -> Iterator[IO[Any]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: Path, data: str | bytes, *, durable: bool = False, private: bool = False) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; returns ``path``."""
    with _open(Path(path), "wb" if isinstance(data, bytes) else "w", durable, private) as fh:
        fh.write(data)
    return Path(path)
