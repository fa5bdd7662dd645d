"""AssetSpecs for models (executed by the multi-asset), sources and exposures (external assets)."""

from __future__ import annotations

import dagster as dg

from ..api import LoadedProject
from ..core.ids import kind_of, node_id
from ..lineage.columns import ProjectColumnLineage
from ..lineage.project_columns import inferred_types
from ..spec.models import Exposure, Model, Source
from .key_map import KeyMap, KeyMapError
from .schedules import automation_condition, freshness_policy
from .translator import StreamtTranslator


def model_columns(loaded: LoadedProject, name: str,
                  lineage: ProjectColumnLineage | None = None) -> list[tuple[str, str | None]]:
    """Declared columns win (they carry types); else the names parsed from the SQL, or the ones
    column lineage expanded from ``SELECT *``."""
    model = loaded.project.models[name]
    if model.columns:
        return [(c.name, c.type) for c in model.columns]
    cm = loaded.compiled.models.get(name)
    if cm and cm.output_columns:
        return [(c, None) for c in cm.output_columns]
    if lineage is not None and name in lineage.models and lineage.models[name].columns:
        return [(c, None) for c in lineage.models[name].columns]
    if cm and cm.from_:
        return model_columns(loaded, cm.from_, lineage) if cm.from_ in loaded.project.models else []
    return []


def _final(t: StreamtTranslator, entity: Model | Source | Exposure, spec: dg.AssetSpec) -> dg.AssetSpec:
    """The translator's last word (``get_asset_spec``); the key stays the one the key map holds."""
    out = t.get_asset_spec(entity, spec)
    if out.key != spec.key:
        raise KeyMapError(f"{type(t).__name__}.get_asset_spec changed the key of {entity.name!r} from "
                          f"{spec.key.to_user_string()!r} to {out.key.to_user_string()!r}: change keys in "
                          "get_model_key / get_source_key / get_exposure_key, which dependencies and the CLI use")
    if out.partitions_def is not None:
        raise KeyMapError(f"{type(t).__name__}.get_asset_spec gave {entity.name!r} a partitions_def: declare "
                          "`partitioned_by:` on the model instead")
    return out


def _described(values: dict[str, object]) -> dict[str, object]:
    """streamt's descriptive settings as Dagster metadata: None and empty values left out, mappings as JSON."""
    return {key: dg.MetadataValue.json(value) if isinstance(value, dict | list) else value
            for key, value in values.items() if value not in (None, [], {}, "")}


def column_lineage_metadata(loaded: LoadedProject, keys: KeyMap,
                            lineage: ProjectColumnLineage | None, name: str) -> dict[str, object]:
    """``dagster/column_lineage`` from the static analysis, so the UI shows it before any run."""
    ml = lineage.models.get(name) if lineage else None
    if ml is None:
        return {}
    deps: dict[str, list[dg.TableColumnDep]] = {}
    for col in ml.columns:
        direct = [e.source for e in ml.fields.get(col, ()) if e.type == "DIRECT"]
        found = [(keys.models.get(s.relation) or keys.sources.get(s.relation), s.column) for s in direct]
        deps[col] = [dg.TableColumnDep(asset_key=key, column_name=c) for key, c in found if key is not None]
    return {"dagster/column_lineage": dg.TableColumnLineage(deps_by_column=deps)}


def model_specs(loaded: LoadedProject, t: StreamtTranslator, keys: KeyMap,
                lineage: ProjectColumnLineage | None = None) -> dict[str, dg.AssetSpec]:
    """The specs of the models the code location defines (``keys.assets``)."""
    specs: dict[str, dg.AssetSpec] = {}
    g = loaded.graph
    types = inferred_types(loaded, lineage)
    for name, cm in sorted(loaded.compiled.models.items()):
        if name not in keys.assets:
            continue
        model = loaded.project.models[name]
        deps = [keys.node(u) for u in g.upstream_of(node_id("model", name)) if kind_of(u) in ("source", "model")]
        metadata = {**t.get_model_metadata(
            model, cm, [(c, t_ or types.get((name, c))) for c, t_ in model_columns(loaded, name, lineage)]),
                    **column_lineage_metadata(loaded, keys, lineage, name)}
        specs[name] = _final(t, model, dg.AssetSpec(
            key=keys.model(name),
            deps=deps,
            description=t.get_description(model, cm),
            group_name=t.get_group_name(model),
            owners=t.get_owners(model),
            tags=t.get_tags(model),
            kinds=t.get_model_kinds(model),
            code_version=t.get_code_version(model, cm),
            metadata=metadata,
            skippable=True,
            automation_condition=automation_condition(model),
            freshness_policy=freshness_policy(model.freshness),
        ))
    return specs


def source_specs(loaded: LoadedProject, t: StreamtTranslator, keys: KeyMap,
                 names: set[str] | None = None) -> list[dg.AssetSpec]:
    """External assets of the sources (``names``; default all)."""
    out = []
    for s in loaded.project.sources.values():
        if names is not None and s.name not in names:
            continue
        md: dict[str, object] = {"format": s.resolved_format}
        location = s.path or s.table or s.topic or s.options.get("dbtable")
        if location:
            md["location"] = (s.path if "://" in s.path else str(loaded.project.resolve_path(s.path))) if s.path \
                else location
        if s.columns:
            md["dagster/column_schema"] = dg.TableSchema(
                columns=[dg.TableColumn(name=c.name, type=c.type or "unknown", description=c.description,
                                        tags={"classification": c.classification} if c.classification else {})
                         for c in s.columns])
        md.update(_described({"topic": s.topic, "schema_subject": s.schema_.subject if s.schema_ else None,
                              "ownership": s.ownership.mode if s.ownership else None}))
        if s.contract:  # streamt's producer contract: version, SLA, contact
            md["contract"] = dg.MetadataValue.json(s.contract)
        producers = [keys.node(u) for u in loaded.graph.upstream_of(node_id("source", s.name))
                     if kind_of(u) == "exposure"]  # streamt's producer exposures write this source
        out.append(_final(t, s, dg.AssetSpec(
            key=keys.sources[s.name], deps=producers, description=s.description, group_name="sources",
            owners=t.get_owners(s),
            tags=t.get_tags(s), kinds=t.get_source_kinds(s), metadata=md,
            freshness_policy=freshness_policy(s.freshness),
        )))
    return out


def exposure_specs(loaded: LoadedProject, t: StreamtTranslator, keys: KeyMap,
                   names: set[str] | None = None) -> list[dg.AssetSpec]:
    """Assets of the exposures (``names``; default all)."""
    out = []
    g = loaded.graph
    for name, e in loaded.project.exposures.items():
        if names is not None and name not in names:
            continue
        deps = [keys.node(u) for u in g.upstream_of(node_id("exposure", name)) if kind_of(u) != "exposure"]
        md: dict[str, object] = {"type": e.type}
        if e.url:
            md["url"] = dg.MetadataValue.url(e.url)
        md.update(_described({
            "role": e.role, "repo": e.repo, "language": e.language, "tool": e.tool,
            "consumer_group": e.consumer_group, "schedule": e.schedule,
            "sla": e.sla.model_dump(exclude_none=True) if e.sla else None,
            "contracts": e.contracts.model_dump(exclude_none=True, by_alias=True) if e.contracts else None,
            "access": e.access.model_dump(exclude_none=True) if e.access else None,
            "contacts": [c.model_dump(exclude_none=True) for c in e.contacts],
            "freshness": e.freshness.model_dump(exclude_none=True) if e.freshness else None,
            "data_requirements": e.data_requirements, "access_justification": e.access_justification,
            "produces": [f"{'model' if r.ref else 'source'}.{r.ref or r.source}" for r in e.produces],
        }))
        out.append(_final(t, e, dg.AssetSpec(
            key=keys.exposures[name], deps=deps, description=e.description, group_name="exposures",
            owners=t.get_owners(e), tags=t.get_tags(e), kinds=t.get_exposure_kinds(e), metadata=md,
        )))
    return out
