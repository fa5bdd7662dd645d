"""``build_definitions(project_dir)``: a whole streamt project as a Dagster code location."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg

from ..api import LoadedProject, load
from ..lineage.project_columns import column_lineage
from ..spec.errors import ProjectError
from .alerts import build_failure_sensor
from .assets import build_models_asset
from .checks import build_source_checks
from .freshness_checks import build_freshness_checks, build_freshness_schedule
from .lineage_sensor import build_lineage_sensor
from .new_data_sensor import build_new_data_sensors
from .partitions import group_key
from .resources import SparkResource
from .schedules import build_schedules
from .specs import exposure_specs, model_specs, source_specs
from .translator import StreamtTranslator


def build_definitions(project_dir: str | Path, env: str | None = None, *,
                      translator: StreamtTranslator | None = None,
                      spark: SparkResource | None = None,
                      loaded: LoadedProject | None = None,
                      column_level_lineage: bool = True) -> dg.Definitions:
    """Load the project (warm cache) and build its assets. An invalid project fails the code
    location load with every error listed, never with a traceback into our internals."""
    loaded = loaded or load(project_dir, env)
    if loaded.errors:
        raise ProjectError(loaded.diagnostics)
    t = translator or StreamtTranslator(loaded.project.name)
    lineage = column_lineage(loaded) if column_level_lineage else None
    specs = model_specs(loaded, t, lineage)
    assets: list[dg.AssetsDefinition | dg.AssetSpec] = list(_models_assets(loaded, specs, t))
    assets += source_specs(loaded, t)
    assets += exposure_specs(loaded, t)
    resource = spark or SparkResource(project_dir=str(loaded.project.root), env=loaded.project.env)
    source_checks = build_source_checks(loaded, t)
    freshness_checks = build_freshness_checks(loaded, t)
    return dg.Definitions(assets=assets, asset_checks=[c for c in (source_checks, freshness_checks) if c],
                          schedules=[*build_schedules(loaded, t), *build_freshness_schedule(loaded, freshness_checks)],
                          sensors=[build_lineage_sensor(loaded), build_failure_sensor(loaded),
                                   *build_new_data_sensors(loaded, t)],
                          resources={"spark": resource})


def _models_assets(loaded: LoadedProject, specs: dict[str, dg.AssetSpec],
                   t: StreamtTranslator) -> list[dg.AssetsDefinition]:
    """Unpartitioned models in one multi-asset; models partitioned alike (and with the same backfill
    policy) in one each, named after their granularity."""
    groups: dict[tuple[str, str] | None, dict[str, dg.AssetSpec]] = {}
    for name, spec in specs.items():
        groups.setdefault(group_key(loaded.project.models[name]), {})[name] = spec
    out = []
    project = loaded.project.ident
    for key in sorted(groups, key=lambda k: ("", "") if k is None else k):
        members = groups[key]
        if key is None:
            out.append(build_models_asset(loaded, members, t))
            continue
        pb = loaded.project.models[sorted(members)[0]].partitioned_by
        assert pb is not None
        kind = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly"}.get(pb.granularity or "",
                                                                                          "static")
        digest = hashlib.sha256(key[0].encode()).hexdigest()[:6]
        suffix = "_per_partition" if key[1] == "per_partition" else ""
        out.append(build_models_asset(loaded, members, t, name=f"{project}_{kind}_models_{digest}{suffix}",
                                      partitioning=pb))
    return out
