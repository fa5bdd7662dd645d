"""In-process progress hook: ``streamt run`` executes the job in its own process, so the models
asset can report each model to the terminal as it finishes without parsing Dagster's logs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelEvent:
    model: str
    status: str  # success | failed | skipped
    rows: int
    seconds: float
    message: str = ""


_listeners: list[Callable[[ModelEvent], None]] = []


def subscribe(fn: Callable[[ModelEvent], None]) -> Callable[[], None]:
    _listeners.append(fn)
    return lambda: _listeners.remove(fn)


def emit(event: ModelEvent) -> None:
    for fn in list(_listeners):
        fn(event)
