"""Source freshness as Dagster asset checks (``<source>_freshness``, on the source's asset) and the
``<project>_source_freshness`` schedule that runs only them.

A freshness policy shows lateness in the UI, counted from the source's last reported update
(:mod:`.source_updates`: when new data was seen); a check measures the data's own age, records it,
alerts like any failed check and runs on a clock.
File sources are measured without Spark; a session starts only for ``max(column)`` checks.

No `from __future__ import annotations`: Dagster reads the runtime type hints of check functions.
"""

import functools
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import dagster as dg
from dagster import AssetCheckExecutionContext

from ..api import LoadedProject
from ..checks.source_freshness import FreshnessOutcome, as_test_result, check_source_freshness, checked_sources
from .key_map import KeyMap
from .progress import CheckEvent, emit
from .resources import SparkResource
from .schedules import schedule_status
from .source_updates import source_states, update_events


def freshness_check_result(key: dg.AssetCheckKey, outcome: FreshnessOutcome) -> dg.AssetCheckResult:
    md: dict[str, Any] = {"measured_by": outcome.measured_by}
    if outcome.last_updated is not None:
        md["last_updated"] = outcome.last_updated.astimezone(UTC).isoformat()
        md["age_seconds"] = round(float(outcome.age_seconds or 0.0), 3)
    if outcome.windows.warn_s is not None:
        md["warn_after_s"] = outcome.windows.warn_s
    if outcome.windows.error_s is not None:
        md["error_after_s"] = outcome.windows.error_s
    for name, value in (outcome.detail or {}).items():
        md[name] = dg.MetadataValue.path(value) if name == "path" else value
    return dg.AssetCheckResult(
        asset_key=key.asset_key, check_name=key.name, passed=outcome.passed,
        severity=dg.AssetCheckSeverity.ERROR if outcome.severity == "error" else dg.AssetCheckSeverity.WARN,
        metadata=md, description=outcome.message or None)


def build_freshness_checks(loaded: LoadedProject, key_map: KeyMap,
                           sources: set[str] | None = None) -> dg.AssetChecksDefinition | None:
    """One check per source (of ``sources``; default all) with a ``freshness:`` window and a way to
    measure it (see checks.source_freshness). Each run also reports the checked sources' new data, if
    any, as their update (:mod:`.source_updates`), so Dagster's freshness policy on them is evaluated."""
    checked = {n: c for n, c in checked_sources(loaded.project).items() if sources is None or n in sources}
    if not checked:
        return None
    keys = {name: key_map.freshness[name] for name in checked}
    specs = [dg.AssetCheckSpec(name=keys[name].name, asset=keys[name].asset_key,
                               description=f"{win.describe()} (measured by {how}).",
                               metadata={"measured_by": how})
             for name, (source, win, how) in checked.items()]
    by_check = {key: name for name, key in keys.items()}

    @dg.multi_asset_check(specs=specs, name=f"{loaded.project.ident}_source_freshness", can_subset=True)
    def source_freshness(context: AssetCheckExecutionContext, spark: SparkResource) -> Iterator[dg.AssetCheckResult]:
        now = datetime.now(UTC)
        names = sorted({by_check[key] for key in context.selected_asset_check_keys})
        for event in update_events(loaded, key_map, context.instance, source_states(loaded, names),
                                   f"check {context.op_def.name}"):
            context.op_execution_context.log_event(event)  # what Dagster's freshness policy counts from
        with ExitStack() as stack:
            @functools.cache
            def session() -> Any:  # started by the first check that needs one
                return stack.enter_context(spark.session(loaded.project))

            for key in sorted(context.selected_asset_check_keys, key=lambda k: k.name):
                name = by_check[key]
                began = time.perf_counter()
                outcome = check_source_freshness(loaded.project, checked[name][0], now=now, session=session)
                result = as_test_result(outcome, time.perf_counter() - began)
                emit(CheckEvent(result.test, result.target, result.passed, result.severity, 0, result.duration_seconds,
                                outcome.message if not outcome.passed else "", result))
                if not outcome.passed:
                    log = context.log.error if outcome.severity == "error" else context.log.warning
                    log(f"streamt: source {name} is stale: {outcome.message}")
                yield freshness_check_result(keys[name], outcome)

    return source_freshness


def build_freshness_schedule(loaded: LoadedProject,
                             checks: dg.AssetChecksDefinition | None) -> list[dg.ScheduleDefinition]:
    """The checks alone (no model runs), every 15 minutes unless ``runtime.freshness_checks_cron`` says otherwise."""
    if checks is None:
        return []
    name = f"{loaded.project.ident}_source_freshness"
    job = dg.define_asset_job(f"{name}_job", selection=dg.AssetSelection.checks(*checks.check_keys),
                              description="Source freshness checks only.")
    return [dg.ScheduleDefinition(name=name, cron_schedule=loaded.project.runtime.freshness_checks_cron,
                                  execution_timezone="UTC", job=job, default_status=schedule_status(loaded, None),
                                  description="Checks how long ago each source with `freshness:` last got data.")]
