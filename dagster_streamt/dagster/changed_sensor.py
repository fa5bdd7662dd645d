"""The ``<project>_changed_models`` sensor: when a model's definition changed since its last run (or such a
change reaches it, or it never ran), one run of what :func:`.change_plan.plan_changes` refreshes fully,
with those full refreshes as the run's config: a change applied whole, as ``streamt run --changed`` does.

Dagster's own ``AutomationCondition.code_version_changed()`` would rerun an edited model without that
refresh: a stream whose filter changed would keep the rows its old query wrote. Stopped until turned on,
as every automation here. Partitioned models are left out (a backfill runs them per partition); models
that only have new data are the new-data sensors' and schedules' business.

No `from __future__ import annotations`: Dagster reads the runtime type hints of sensor functions.
"""

import hashlib
import json

import dagster as dg
from dagster import SensorEvaluationContext

from ..api import LoadedProject
from .change_plan import plan_changes
from .key_map import KeyMap

CHANGED_TAG = "streamt/changed"  # the models a changed-models run applies a change to


def changed_models(loaded: LoadedProject, keys: KeyMap) -> list[str]:
    """The models the sensor may run: the code location's, enabled, not partitioned."""
    models = loaded.project.models
    return sorted(m for m in keys.assets if m in loaded.compiled.models and models[m].enabled
                  and models[m].partitioned_by is None)


def build_changed_sensor(loaded: LoadedProject, keys: KeyMap) -> dg.SensorDefinition:
    models = changed_models(loaded, keys)
    running = loaded.project.runtime.automations.starts(None)
    status = dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED

    @dg.sensor(name=f"{loaded.project.ident}_changed_models", default_status=status, minimum_interval_seconds=60,
               asset_selection=[keys.model(m) for m in models] or None,
               description="Runs the models whose definition changed since their last run (and what the change "
                           "reaches), with the full refreshes `streamt plan` names.")
    def changed(context: SensorEvaluationContext) -> dg.SensorResult:
        plan = plan_changes(loaded, models, context.instance, keys)
        full = [c for c in plan.changes if c.kind == "model" and c.refresh == "full" and c.name in models]
        if not full:
            return dg.SensorResult(skip_reason="no model changed since its last run")
        names = [n for n in plan.order if n in {c.name for c in full}]
        last = {}
        for name in names:  # the same change after another run of the model is a new request
            event = context.instance.get_latest_materialization_event(keys.model(name))
            last[name] = event.run_id if event is not None else "never"
        key = hashlib.sha256(json.dumps([[c.name, c.change, list(c.reasons), last[c.name]] for c in full],
                                        sort_keys=True).encode()).hexdigest()[:32]
        context.log.info("streamt: changed since their last run: " +
                         "; ".join(f"{c.name} ({c.change}: {c.reason})" for c in full))
        request = dg.RunRequest(run_key=f"changed:{key}", asset_selection=[keys.model(n) for n in names],
                                run_config={"resources": {"run_options": {"config": {"full_refresh": names}}}},
                                tags={CHANGED_TAG: ", ".join(names)})
        return dg.SensorResult(run_requests=[request])

    return changed
