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
    per_model: dict[str, float] = field(default_factory=dict)  # each model's own time (its result's)

    def line(self) -> str:
        """``Spark session 5.2 s, models 4.1 s, tests 1.9 s (quarantine orders_raw 1.3 s)``."""
        parts = [f"Spark session {self.session:.1f} s" if self.session else "no Spark session",
                 f"models {self.models:.1f} s", f"tests {self.tests:.1f} s"]
        if self.without_spark:
            parts.append(f"{self.without_spark} model(s) unchanged without Spark")
        beside = ", ".join(f"{name} {secs:.1f} s" for name, secs in sorted(self.quarantine.items()))
        return ", ".join(parts) + (f" (quarantine queries beside the models: {beside})" if beside else "")

    def models_line(self, most: int = 20) -> str:
        """Each model's own time, the slowest first (the ``most`` slowest): the step is one bar in
        Dagster's Gantt chart (one Spark session runs every model of the step), so this says which model
        took it.

        >>> StepTimes("shop_models", per_model={"a": 1.04, "b": 3.0, "c": 1.04}).models_line(most=2)
        'b 3.0 s, a 1.0 s and 1 more'
        """
        ranked = sorted(self.per_model.items(), key=lambda item: (-item[1], item[0]))
        shown = ", ".join(f"{name} {secs:.1f} s" for name, secs in ranked[:most])
        return shown + (f" and {len(ranked) - most} more" if len(ranked) > most else "")


Event = ModelResult | CheckEvent | StepTimes | Any  # and a continuous run's StreamEvent / ModelProgress
_listeners: list[Callable[[Event], None]] = []


def subscribe(fn: Callable[[Event], None]) -> Callable[[], None]:
    _listeners.append(fn)
    return lambda: _listeners.remove(fn)


def emit(event: Event) -> None:
    for fn in list(_listeners):
        fn(event)


def report_times(context: Any, times: StepTimes) -> None:
    """Tell the CLI where the step's time went, and keep the line as the run's tag for the UI; with the
    models' own times, the slowest first, as a log line and the ``streamt/model_times/<step>`` tag."""
    emit(times)
    tags = {f"streamt/time/{times.step}": times.line()}
    if times.per_model:
        tags[f"streamt/model_times/{times.step}"] = times.models_line()
        context.log.info(f"streamt: time per model, slowest first: {times.models_line()}")
    context.instance.add_run_tags(context.run.run_id, tags)
