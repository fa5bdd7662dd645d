"""In-process progress hook: ``streamt run`` executes the job in its own process, so the models
asset can report each model to the terminal as it finishes without parsing Dagster's logs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModelEvent:
    model: str
    status: str  # success | failed | skipped
    rows: int | None  # None: nothing stored (a view) or no count came back (unknown)
    seconds: float
    message: str = ""
    refresh: str = ""  # tables: how this run brought it up to date (see ModelResult.refresh)
    refresh_note: str = ""
    materialized: str = ""  # table | view | stream | sink: tells a view's None from an unknown count


@dataclass(frozen=True)
class CheckEvent:
    test: str
    target: str  # model.x | source.y
    passed: bool
    severity: str  # error | warn
    failing_rows: int
    seconds: float
    message: str = ""
    result: Any = None  # the full TestResult, for `streamt test`'s table and JSON


Event = ModelEvent | CheckEvent
_listeners: list[Callable[[Event], None]] = []


def subscribe(fn: Callable[[Event], None]) -> Callable[[], None]:
    _listeners.append(fn)
    return lambda: _listeners.remove(fn)


def emit(event: Event) -> None:
    for fn in list(_listeners):
        fn(event)
