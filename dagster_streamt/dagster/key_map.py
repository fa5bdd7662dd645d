"""The key map: which Dagster asset key and check key each project node has in a code location.

The code location's translator decides keys (a ``StreamtTranslator`` subclass in ``definitions.py``,
or a component's ``translation:``); :meth:`KeyMap.build` asks it once per node, and everything else
(specs, checks, schedules, sensors, OpenLineage, every CLI command) reads the map, never a key built
by hand. ``build_definitions`` stores the map in the ``Definitions`` metadata under
``streamt/key_map/<project>`` (as dagster-dbt stores its manifest and translator in asset
metadata), so a command that loads the code location reads back exactly the keys the UI shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import dagster as dg

from ..checks.source_freshness import check_name as freshness_check_name
from ..checks.source_freshness import checked_sources
from ..core.ids import split_id

if TYPE_CHECKING:
    from ..api import LoadedProject
    from .translator import StreamtTranslator

METADATA_PREFIX = "streamt/key_map/"
FORMAT = 1


class KeyMapError(ValueError):
    """Two nodes got the same key, or a stored map does not fit the project."""


def metadata_key(project_name: str) -> str:
    return f"{METADATA_PREFIX}{project_name}"


@dataclass(frozen=True)
class KeyMap:
    """Asset keys of models, sources and exposures; check keys of the tests and source freshness
    checks the code location defines. ``assets``: the models it defines (a component's
    ``select``/``exclude`` may leave some out; their keys are still known, for the dependencies of
    the others)."""

    project: str
    env: str | None
    models: Mapping[str, dg.AssetKey]
    sources: Mapping[str, dg.AssetKey]
    exposures: Mapping[str, dg.AssetKey]
    tests: Mapping[str, dg.AssetCheckKey]
    freshness: Mapping[str, dg.AssetCheckKey]
    assets: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def build(cls, loaded: LoadedProject, t: StreamtTranslator, assets: Iterable[str] | None = None,
              sources: Iterable[str] | None = None) -> KeyMap:
        """Ask the translator for every key once; raise :class:`KeyMapError` when two nodes collide.
        ``assets`` / ``sources``: the models and sources whose checks are defined (default all)."""
        p = loaded.project
        models = {n: t.get_model_key(p.models[n]) for n in sorted(loaded.compiled.models)}
        source_keys = {n: t.get_source_key(p.sources[n]) for n in sorted(p.sources)}
        exposures = {n: t.get_exposure_key(p.exposures[n]) for n in sorted(p.exposures)}
        seen: dict[dg.AssetKey, str] = {}
        for kind, keys in (("model", models), ("source", source_keys), ("exposure", exposures)):
            for name, key in keys.items():
                if not isinstance(key, dg.AssetKey):
                    raise KeyMapError(f"{type(t).__name__} gave {kind} {name!r} the key {key!r}, "
                                      "not a dagster AssetKey")
                if key in seen:
                    raise KeyMapError(f"{seen[key]} and {kind} {name!r} both get the asset key "
                                      f"{key.to_user_string()!r} from {type(t).__name__}: give each its own key")
                seen[key] = f"{kind} {name!r}"
        chosen = frozenset(models if assets is None else assets) & set(models)
        checked = set(source_keys if sources is None else sources)
        tests = {}
        for name in sorted(p.tests):
            test = p.tests[name]
            target = (models.get(str(test.model)) if test.model in chosen
                      else source_keys.get(str(test.source)) if test.source in checked else None)
            if target is not None and test.enabled:
                tests[name] = dg.AssetCheckKey(target, t.get_check_name(test))
        freshness = {name: dg.AssetCheckKey(source_keys[name], freshness_check_name(source))
                     for name, (source, _, _) in checked_sources(p).items() if name in checked}
        return cls(p.name, p.env, models, source_keys, exposures, tests, freshness, chosen)

    # lookups ------------------------------------------------------------------------------
    def model(self, name: str) -> dg.AssetKey:
        return self.models[name]

    def node(self, node_id: str) -> dg.AssetKey:
        """``model.x`` / ``source.y`` / ``exposure.z`` -> its asset key."""
        kind, name = split_id(node_id)
        return {"model": self.models, "source": self.sources, "exposure": self.exposures}[kind][name]

    @cached_property
    def _model_of(self) -> dict[dg.AssetKey, str]:
        return {k: n for n, k in self.models.items()}

    def model_of(self, key: dg.AssetKey) -> str | None:
        """The model whose asset ``key`` is (None for a source, exposure or foreign asset)."""
        return self._model_of.get(key)

    def missing(self, names: Iterable[str]) -> list[str]:
        """Of ``names``, the models this code location does not define."""
        return sorted(n for n in names if n not in self.assets)

    # stored form --------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        def checks(m: Mapping[str, dg.AssetCheckKey]) -> dict[str, list[Any]]:
            return {n: [list(k.asset_key.path), k.name] for n, k in sorted(m.items())}

        return {"format": FORMAT, "project": self.project, "env": self.env,
                "models": {n: list(k.path) for n, k in sorted(self.models.items())},
                "sources": {n: list(k.path) for n, k in sorted(self.sources.items())},
                "exposures": {n: list(k.path) for n, k in sorted(self.exposures.items())},
                "tests": checks(self.tests), "freshness": checks(self.freshness),
                "assets": sorted(self.assets)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KeyMap:
        if data.get("format") != FORMAT:
            raise KeyMapError(f"stored key map has format {data.get('format')!r}; this dagster-streamt reads {FORMAT}")

        def checks(m: Mapping[str, Any]) -> dict[str, dg.AssetCheckKey]:
            return {n: dg.AssetCheckKey(dg.AssetKey(list(path)), str(name)) for n, (path, name) in m.items()}

        return cls(str(data["project"]), data.get("env"),
                   {n: dg.AssetKey(list(p)) for n, p in data["models"].items()},
                   {n: dg.AssetKey(list(p)) for n, p in data["sources"].items()},
                   {n: dg.AssetKey(list(p)) for n, p in data["exposures"].items()},
                   checks(data["tests"]), checks(data["freshness"]), frozenset(data["assets"]))

    def as_metadata(self) -> dict[str, dg.MetadataValue]:
        return {metadata_key(self.project): dg.MetadataValue.json(self.to_json())}

    @classmethod
    def from_definitions(cls, defs: dg.Definitions, project_name: str) -> KeyMap | None:
        """The map ``build_definitions`` stored for ``project_name`` (None: no such project there)."""
        value: Any = (defs.metadata or {}).get(metadata_key(project_name))
        if value is None:
            return None
        data = value.value if isinstance(value, dg.MetadataValue) else value
        if not isinstance(data, Mapping):
            raise KeyMapError(f"metadata {metadata_key(project_name)!r} is not a dagster-streamt key map")
        return cls.from_json(data)
