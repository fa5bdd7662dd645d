"""In-process progress hook: ``streamt run`` executes the job in its own process, so the models
asset can report each model to the terminal as it finishes without parsing Dagster's logs.

A model is reported as the runner's own :class:`~dagster_streamt.core.results.ModelResult`, the
object its materialization metadata is built from: the terminal and the UI say the same thing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass
class StepTimes:
    """Where one models step spent its time, in seconds, as its own clock saw it: starting the Spark
    session, running the models (each model's own time is its result's), their data tests, and each
    source's quarantine query (in the background, beside the models). The CLI adds Dagster's own
    share and OpenLineage's; the run's ``streamt/time/<step>`` tag keeps the line for the UI."""

    step: str
    session: float = 0.0
    models: float = 0.0
    tests: float = 0.0
    quarantine: dict[str, float] = field(default_factory=dict)
    without_spark: int = 0  # models found unchanged without starting Spark

    def line(self) -> str:
        """``Spark session 5.2 s, models 4.1 s, tests 1.9 s (quarantine orders_raw 1.3 s)``."""
        parts = [f"Spark session {self.session:.1f} s" if self.session else "no Spark session",
                 f"models {self.models:.1f} s", f"tests {self.tests:.1f} s"]
        if self.without_spark:
            parts.append(f"{self.without_spark} model(s) unchanged without Spark")
        beside = ", ".join(f"{name} {secs:.1f} s" for name, secs in sorted(self.quarantine.items()))
        return ", ".join(parts) + (f" (quarantine queries beside the models: {beside})" if beside else "")


Event = ModelResult | CheckEvent | StepTimes
_listeners: list[Callable[[Event], None]] = []


def subscribe(fn: Callable[[Event], None]) -> Callable[[], None]:
    _listeners.append(fn)
    return lambda: _listeners.remove(fn)


def emit(event: Event) -> None:
    for fn in list(_listeners):
        fn(event)


def report_times(context: Any, times: StepTimes) -> None:
    """Tell the CLI where the step's time went, and keep the line as the run's tag for the UI."""
    emit(times)
    context.instance.add_run_tags(context.run.run_id, {f"streamt/time/{times.step}": times.line()})
