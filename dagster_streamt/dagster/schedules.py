"""Project ``schedules:`` as Dagster schedules over asset jobs of the selected models, and per-model
``automation:`` as declarative automation conditions."""

from __future__ import annotations

from datetime import timedelta

import dagster as dg

from ..api import LoadedProject
from ..core.ids import names_of
from ..graph.select import select
from ..spec.models import Freshness, Model
from ..spec.names import safe_identifier
from .key_map import KeyMap


def schedule_status(loaded: LoadedProject, enabled: bool | None) -> dg.DefaultScheduleStatus:
    """A schedule's own ``enabled`` when given, else ``runtime.automations.default_status`` (stopped unless
    set: Dagster's convention, so that opening the UI to look starts no Spark run)."""
    running = loaded.project.runtime.automations.starts(enabled)
    return dg.DefaultScheduleStatus.RUNNING if running else dg.DefaultScheduleStatus.STOPPED


def build_schedules(loaded: LoadedProject, key_map: KeyMap) -> list[dg.ScheduleDefinition]:
    """One schedule per ``schedules:`` entry over the selected models this code location defines
    (an entry whose models are all left out by the component's select/exclude is left out too)."""
    out = []
    for name, s in loaded.project.schedules.items():
        models = names_of(select(loaded.graph, s.select))  # validated at load time
        keys = [key_map.model(m) for m in models if m in key_map.assets]
        if not keys:
            continue
        job = dg.define_asset_job(f"{safe_identifier(name)}_job", selection=dg.AssetSelection.assets(*keys),
                                  description=f"Models selected by `{s.select}` (schedule {name})")
        out.append(dg.ScheduleDefinition(
            name=safe_identifier(name), cron_schedule=s.cron, execution_timezone=s.timezone, job=job,
            description=s.description,
            default_status=schedule_status(loaded, s.enabled),
        ))
    return out


def automation_condition(model: Model) -> dg.AutomationCondition | None:
    """``eager``: run when an upstream updates; ``on_cron``: once per cron tick after upstreams update.
    Dagster evaluates these only while its automation sensor (default_automation_condition_sensor) is on."""
    a = model.automation
    if a is None:
        return None
    if a.on_cron:
        return dg.AutomationCondition.on_cron(a.on_cron)
    if a.eager:
        return dg.AutomationCondition.eager()
    return None


MIN_POLICY_WINDOW_S = 60.0


def policy_windows(fresh: Freshness | None) -> tuple[float, float | None] | None:
    """``freshness: {warn_after, error_after}`` (or streamt's seconds) as the (fail, warn) seconds of a
    Dagster 1.13 time-window freshness policy; None without a window."""
    from ..checks.source_freshness import windows

    win = windows(fresh)
    if win is None:
        return None
    fail = win.error_s if win.error_s is not None else win.warn_s  # a policy needs a fail window
    warn = win.warn_s if win.error_s is not None else None
    assert fail is not None
    # Dagster's policies count whole minutes; streamt's `30s` windows stay exact in the freshness checks
    fail, warn = max(fail, MIN_POLICY_WINDOW_S), max(warn, MIN_POLICY_WINDOW_S) if warn is not None else None
    return fail, warn if warn is not None and warn < fail else None


def freshness_policy(fresh: Freshness | None) -> dg.FreshnessPolicy | None:
    """The time-window freshness policy of :func:`policy_windows`: the asset is late once its last
    update is older than the window."""
    found = policy_windows(fresh)
    if found is None:
        return None
    fail, warn = found
    return dg.FreshnessPolicy.time_window(fail_window=timedelta(seconds=fail),
                                          warn_window=timedelta(seconds=warn) if warn is not None else None)
