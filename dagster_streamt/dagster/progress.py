"""In-process progress hook: ``streamt run`` executes the job in its own process, so the models
asset can report each model to the terminal as it finishes without parsing Dagster's logs.

A model is reported as the runner's own :class:`~dagster_streamt.core.results.ModelResult`, the
object its materialization metadata is built from: the terminal and the UI say the same thing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.results import ModelResult


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


Event = ModelResult | CheckEvent
_listeners: list[Callable[[Event], None]] = []


def subscribe(fn: Callable[[Event], None]) -> Callable[[], None]:
    _listeners.append(fn)
    return lambda: _listeners.remove(fn)


def emit(event: Event) -> None:
    for fn in list(_listeners):
        fn(event)
