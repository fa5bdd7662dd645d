"""A component's ``translation:`` block as a translator, so its keys reach dependencies, checks,
schedules, sensors and the key map the CLI reads, exactly like a Python ``StreamtTranslator``.

The block is resolved the way dagster-dbt resolves its own (same attributes, same templates): each
node is offered as ``node`` (``{{ node.name }}``, ``{{ node.type }}``, ``{{ node.tags }}``, every key
of its YAML...) and the default spec as ``spec``. Keys are decided from a light default spec (key,
group, owners, tags, kinds, description): a key template sees those; every other attribute is
translated on the full spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg

from ..api import LoadedProject
from ..dagster.translator import StreamtTranslator
from ..spec.models import Exposure, Model, Source

TranslationFn = Callable[[dg.AssetSpec, Mapping[str, Any]], dg.AssetSpec]
Entity = Model | Source | Exposure


def kind_of(entity: Entity) -> str:
    return "model" if isinstance(entity, Model) else "source" if isinstance(entity, Source) else "exposure"


def node_vars(loaded: LoadedProject, entity: Entity) -> dict[str, Any]:
    """What ``{{ node }}`` holds: the entity as written (JSON values), plus ``type`` /
    ``resource_type`` (model, source, exposure), ``unique_id`` (``model.x``), ``project`` and, for a
    model, its resolved ``materialized``."""
    kind = kind_of(entity)
    data: dict[str, Any] = entity.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.update(name=entity.name, type=kind, resource_type=kind, unique_id=f"{kind}.{entity.name}",
                project=loaded.project.name, tags=sorted(entity.tags))
    if kind == "model" and entity.name in loaded.compiled.models:
        data["materialized"] = loaded.compiled.models[entity.name].materialized
    return data


def _from_base(name: str) -> Any:
    """A method that answers with the base translator's method ``name`` (a subclass's override included)."""
    return lambda self, *args, **kwargs: getattr(self.base, name)(*args, **kwargs)


class TranslatedTranslator(StreamtTranslator):
    """``base`` (the component's translator), with ``translation`` applied on top."""

    def __init__(self, base: StreamtTranslator, translation: TranslationFn, loaded: LoadedProject) -> None:
        super().__init__(base.project_name)
        self.base, self.translation, self.loaded = base, translation, loaded
        self._keys: dict[str, dg.AssetKey] = {}

    def _base_key(self, entity: Entity) -> dg.AssetKey:
        if isinstance(entity, Model):
            return self.base.get_model_key(entity)
        if isinstance(entity, Source):
            return self.base.get_source_key(entity)
        return self.base.get_exposure_key(entity)

    def _light_spec(self, entity: Entity) -> dg.AssetSpec:
        if isinstance(entity, Model):
            compiled = self.loaded.compiled.models.get(entity.name)
            return dg.AssetSpec(key=self._base_key(entity), group_name=self.base.get_group_name(entity),
                                owners=self.base.get_owners(entity), tags=self.base.get_tags(entity),
                                kinds=self.base.get_model_kinds(entity),
                                description=self.base.get_description(entity, compiled) if compiled else None)
        kinds = self.base.get_source_kinds(entity) if isinstance(entity, Source) else \
            self.base.get_exposure_kinds(entity)
        return dg.AssetSpec(key=self._base_key(entity), group_name=f"{kind_of(entity)}s",
                            owners=self.base.get_owners(entity), tags=self.base.get_tags(entity), kinds=kinds,
                            description=entity.description)

    def _key(self, entity: Entity) -> dg.AssetKey:
        uid = f"{kind_of(entity)}.{entity.name}"
        if uid not in self._keys:
            self._keys[uid] = self.translation(self._light_spec(entity), node_vars(self.loaded, entity)).key
        return self._keys[uid]

    # keys: translated ---------------------------------------------------------------------
    def get_model_key(self, model: Model) -> dg.AssetKey:
        return self._key(model)

    def get_source_key(self, source: Source) -> dg.AssetKey:
        return self._key(source)

    def get_exposure_key(self, exposure: Exposure) -> dg.AssetKey:
        return self._key(exposure)

    def get_asset_spec(self, entity: Entity, spec: dg.AssetSpec) -> dg.AssetSpec:
        """Translate the full spec from its default key (so ``key_prefix`` prefixes once), then put
        back the key the map holds."""
        spec = self.base.get_asset_spec(entity, spec)
        out = self.translation(spec.replace_attributes(key=self._base_key(entity)), node_vars(self.loaded, entity))
        return out.replace_attributes(key=spec.key)

    # everything else: the base translator's -----------------------------------------------
    get_check_name = _from_base("get_check_name")
    get_group_name = _from_base("get_group_name")
    get_owners = _from_base("get_owners")
    get_tags = _from_base("get_tags")
    get_model_kinds = _from_base("get_model_kinds")
    get_source_kinds = _from_base("get_source_kinds")
    get_exposure_kinds = _from_base("get_exposure_kinds")
    get_description = _from_base("get_description")
    get_code_version = _from_base("get_code_version")
    get_model_metadata = _from_base("get_model_metadata")
