"""``build_definitions(project_dir)``: a whole streamt project as a Dagster code location."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from ..api import LoadedProject, load
from ..lineage.project_columns import column_lineage
from ..spec.errors import ProjectError
from .alerts import build_failure_sensor
from .assets import build_models_asset
from .checks import build_source_checks
from .lineage_sensor import build_lineage_sensor
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
    assets: list[dg.AssetsDefinition | dg.AssetSpec] = []
    if specs:
        assets.append(build_models_asset(loaded, specs, t))
    assets += source_specs(loaded, t)
    assets += exposure_specs(loaded, t)
    resource = spark or SparkResource(project_dir=str(loaded.project.root), env=loaded.project.env)
    source_checks = build_source_checks(loaded, t)
    return dg.Definitions(assets=assets, asset_checks=[source_checks] if source_checks else [],
                          schedules=build_schedules(loaded, t),
                          sensors=[build_lineage_sensor(loaded), build_failure_sensor(loaded)],
                          resources={"spark": resource})
