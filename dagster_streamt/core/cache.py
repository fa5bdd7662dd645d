"""Header-checked pickle caches: a small header is read and checked before the (large) payload.

Every warm-path cache (the loaded project, its graph, parse summaries, column lineage) has the same
life: written after a cold computation, ignored when stale or unreadable, never an error. A
read-only project simply runs without them.
"""

from __future__ import annotations

import gc
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .files import atomic_writer

_UNREADABLE = (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError, ImportError)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Unpickling a big cache creates millions of objects; the cyclic GC would rescan them again and
    again (5x slower at 10,000 models). Nothing cyclic is garbage while we load."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_cache(path: Path, accept: Callable[[Any], bool]) -> Any | None:
    """The payload stored at ``path`` when ``accept(header)`` holds; None when missing, stale or broken."""
    try:
        with path.open("rb") as fh:
            if not accept(pickle.load(fh)):
                return None
            with gc_paused():
                return pickle.load(fh)
    except _UNREADABLE:
        return None


def write_cache(path: Path, header: Any, payload: Any, *, private: bool = False) -> bool:
    """Store ``header`` then ``payload``; False when the folder is not writable (the cache is optional)."""
    try:
        with atomic_writer(path, "wb", private=private) as fh:
            pickle.dump(header, fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        return False
    return True
