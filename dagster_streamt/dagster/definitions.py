"""``build_definitions(project_dir)``: a whole streamt project as a Dagster code location."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from ..api import LoadedProject, load
from ..core.ids import kind_of, name_of, names_of, node_id
from ..graph.select import SelectionError, select
from ..lineage.project_columns import column_lineage
from ..spec.errors import ProjectError
from .alerts import build_failure_sensor
from .assets import build_models_asset
from .changed_sensor import build_changed_sensor
from .continuous_job import build_continuous_job
from .freshness_checks import build_freshness_checks, build_freshness_schedule
from .kafka_sensor import build_kafka_sensors, observable_kafka_sources
from .key_map import KeyMap
from .lineage_sensor import build_lineage_sensor
from .new_data_sensor import build_new_data_sensors
from .partitions import group_key
from .resources import RunOptions, SparkResource, as_spark_resource
from .schedules import build_schedules
from .source_tests import build_source_checks
from .specs import exposure_specs, model_specs, source_specs
from .translator import StreamtTranslator

if TYPE_CHECKING:
    from dagster_pyspark import LazyPySparkResource, PySparkResource


def build_definitions(project_dir: str | Path, env: str | None = None, *,
                      translator: StreamtTranslator | None = None,
                      spark: SparkResource | PySparkResource | LazyPySparkResource | None = None,
                      loaded: LoadedProject | None = None,
                      column_level_lineage: bool = True,
                      select: str | None = None, exclude: str | None = None) -> dg.Definitions:
    """A whole streamt project as a Dagster code location: assets, checks, schedules, sensors.

    Loads the project (warm cache) and builds one asset per model (run on Spark), sources and
    exposures as external assets, tests as asset checks, the project's schedules, the new-data,
    failure-alert and OpenLineage sensors and a ``spark`` resource. The key map (every asset key the
    translator gave) goes into the definitions' metadata, where the CLI reads it. An invalid
    project fails the code location load with every error listed.

    Args:
        project_dir: The folder holding ``stream_project.yml``.
        env: The environment overlay (``environments/<env>.yml``); default ``$STREAMT_ENV``.
        translator: Decides asset keys, groups, owners, tags, kinds and metadata; default
            ``StreamtTranslator(<project name>)``.
        spark: A ``SparkResource``, or a dagster-pyspark ``PySparkResource`` /
            ``LazyPySparkResource`` (its ``spark_config`` laid under ``runtime.spark.conf``).
        loaded: An already loaded project (skips the load).
        column_level_lineage: Compute ``dagster/column_lineage`` metadata from the SQL.
        select: Keep these models only (selection syntax: ``name``, ``+name``, ``name+``, ``tag:x``...).
        exclude: Leave these models out (same syntax).

    Returns:
        The ``Definitions`` of the project.

    Raises:
        ProjectError: The project has errors (each with ``file:line``).

    Examples:
        A project's ``definitions.py`` (what ``dg dev`` and the CLI load) is
        ``defs = build_definitions(Path(__file__).parent)``; here on the example project:

        >>> from dagster_streamt import build_definitions
        >>> defs = build_definitions("project", select="orders_clean+")
        >>> sorted(k.to_user_string() for k in defs.resolve_all_asset_keys())[:4]
        ['customer_orders', 'daily_revenue', 'exposures/billing_service', 'exposures/ops_dashboard']
        >>> sorted(defs.resources)
        ['run_options', 'spark']
    """
    loaded = loaded or load(project_dir, env)
    if loaded.errors:
        raise ProjectError(loaded.diagnostics)
    t = translator or StreamtTranslator(loaded.project.name)
    chosen = selected_models(loaded, select, exclude)
    sources, exposures = _neighbours(loaded, chosen) if chosen != set(loaded.compiled.models) else (None, None)
    keys = KeyMap.build(loaded, t, chosen, sources)
    lineage = column_lineage(loaded) if column_level_lineage else None
    specs = model_specs(loaded, t, keys, lineage)
    assets: list[dg.AssetsDefinition | dg.AssetSpec] = list(_models_assets(loaded, specs, keys))
    assets += observable_kafka_sources(loaded, source_specs(loaded, t, keys, sources), keys)
    assets += exposure_specs(loaded, t, keys, exposures)
    resource = as_spark_resource(spark, str(loaded.project.root), loaded.project.env)
    source_checks = build_source_checks(loaded, keys, sources)
    freshness_checks = build_freshness_checks(loaded, keys, sources)
    continuous = build_continuous_job(loaded, keys)
    return dg.Definitions(jobs=[continuous] if continuous else None, assets=assets,
                          asset_checks=[c for c in (source_checks, freshness_checks) if c],
                          schedules=[*build_schedules(loaded, keys),
                                     *build_freshness_schedule(loaded, freshness_checks)],
                          sensors=[build_lineage_sensor(loaded, keys), build_failure_sensor(loaded, keys),
                                   build_changed_sensor(loaded, keys),
                                   *build_new_data_sensors(loaded, keys, sources),
                                   *build_kafka_sensors(loaded, keys, sources)],
                          resources={"spark": resource, "run_options": RunOptions()}, metadata=keys.as_metadata())


def selected_models(loaded: LoadedProject, select_: str | None, exclude: str | None) -> set[str]:
    """The models ``select`` minus ``exclude`` name (selection syntax; default every model)."""
    graph, models = loaded.graph, set(loaded.compiled.models)
    try:
        chosen = set(names_of(select(graph, select_))) if select_ else set(models)
        if exclude:
            chosen -= set(names_of(select(graph, exclude)))
    except SelectionError as exc:
        raise ValueError(f"select/exclude of project {loaded.project.name!r}: {exc}") from None
    return chosen & models


def _neighbours(loaded: LoadedProject, chosen: set[str]) -> tuple[set[str], set[str]]:
    """With a selection: the sources the chosen models read, and the exposures that consume them."""
    g = loaded.graph
    sources = {name_of(u) for m in chosen for u in g.upstream_of(node_id("model", m)) if kind_of(u) == "source"}
    exposures = {name_of(d) for m in chosen for d in g.downstream_of(node_id("model", m)) if kind_of(d) == "exposure"}
    return sources, exposures


def _models_assets(loaded: LoadedProject, specs: dict[str, dg.AssetSpec],
                   keys: KeyMap) -> list[dg.AssetsDefinition]:
    """Unpartitioned models in one multi-asset; models partitioned alike (and with the same backfill
    policy) in one each, named after their granularity."""
    groups: dict[tuple[str, str] | None, dict[str, dg.AssetSpec]] = {}
    for name, spec in specs.items():
        groups.setdefault(group_key(loaded.project.models[name]), {})[name] = spec
    out = []
    for key in sorted(groups, key=lambda k: ("", "") if k is None else k):
        members = groups[key]
        if key is None:
            out.append(build_models_asset(loaded, members, keys))
            continue
        pb = loaded.project.models[sorted(members)[0]].partitioned_by
        assert pb is not None
        kind = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly"}.get(pb.granularity or "",
                                                                                          "static")
        digest = hashlib.sha256(key[0].encode()).hexdigest()[:6]
        suffix = "_per_partition" if key[1] == "per_partition" else ""
        out.append(build_models_asset(loaded, members, keys, partitioning=pb,
                                      name=f"{loaded.project.ident}_{kind}_models_{digest}{suffix}"))
    return out
