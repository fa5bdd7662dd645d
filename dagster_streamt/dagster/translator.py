"""How project entities become Dagster asset keys, groups, owners, tags, kinds and metadata.

Subclass :class:`StreamtTranslator` and pass it to ``build_definitions`` to change any of them,
like dagster-dbt's translator. The keys it gives are recorded once in the code location's key map
(:mod:`.key_map`), which every CLI command and sensor reads: a subclass changes keys everywhere.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import dagster as dg

from ..compile.compiled import CompiledModel
from ..spec.connectors import sink_target
from ..spec.models import Exposure, Model, Source, Test
from ..spec.names import safe_identifier

_OWNER_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
EXPOSURE_KINDS = {"dashboard": "dashboard", "application": "application", "api": "api",
                  "ml_training": "ml", "ml_inference": "ml", "notebook": "notebook", "analysis": "notebook"}


def _owner(owner: str | None) -> list[str]:
    if not owner:
        return []
    return [owner if _OWNER_EMAIL.match(owner) or owner.startswith("team:") else f"team:{owner}"]


def _tags(tags: list[str] | tuple[str, ...]) -> dict[str, str]:
    # Dagster tag keys allow [A-Za-z0-9_.-]; project tags are shown as valueless tags
    return {re.sub(r"[^A-Za-z0-9_.-]", "_", t)[:63]: "" for t in sorted(tags)}


class StreamtTranslator:
    """How streamt entities become Dagster assets: keys, groups, owners, tags, descriptions.

    The extension point for a code location's naming: subclass it in the project's
    ``definitions.py`` and pass it to :func:`build_definitions`. The CLI loads that file, so
    ``streamt run``, ``backfill``, ``status``, sensors and OpenLineage use the same keys as the UI::

        import dagster as dg
        from pathlib import Path
        from dagster_streamt.dagster import StreamtTranslator, build_definitions

        class Prefixed(StreamtTranslator):
            def get_model_key(self, model):
                return dg.AssetKey(["shop", model.name])

            def get_asset_spec(self, entity, spec):
                return spec.merge_attributes(tags={"team": "data-eng"})

        defs = build_definitions(Path(__file__).parent, translator=Prefixed("shop"))
    """

    def __init__(self, project_name: str) -> None:
        self.project_name = project_name

    # keys ---------------------------------------------------------------------------------
    def get_model_key(self, model: Model) -> dg.AssetKey:
        return dg.AssetKey([model.name])

    def get_source_key(self, source: Source) -> dg.AssetKey:
        return dg.AssetKey(["sources", source.name])

    def get_exposure_key(self, exposure: Exposure) -> dg.AssetKey:
        return dg.AssetKey(["exposures", exposure.name])

    def get_check_name(self, test: Test) -> str:
        """Dagster check names allow letters, digits and ``_`` only."""
        return safe_identifier(test.name)

    def get_asset_spec(self, entity: Model | Source | Exposure, spec: dg.AssetSpec) -> dg.AssetSpec:
        """The last word on each asset's spec, built from the methods above: return it changed
        (``spec.replace_attributes(...)``, ``spec.merge_attributes(...)``). Keys come from the
        ``get_*_key`` methods only (dependencies and the CLI use them), so the key must stay."""
        return spec

    # attributes ---------------------------------------------------------------------------
    def get_group_name(self, model: Model) -> str:
        return re.sub(r"[^A-Za-z0-9_]", "_", model.group or self.project_name)

    def get_owners(self, entity: Model | Source | Exposure) -> list[str]:
        return _owner(entity.owner)

    def get_tags(self, entity: Model | Source | Exposure) -> dict[str, str]:
        return _tags(entity.tags)

    def get_model_kinds(self, model: Model) -> set[str]:
        return {"spark", model.materialized or "table"}

    def get_source_kinds(self, source: Source) -> set[str]:
        return {source.resolved_format}

    def get_exposure_kinds(self, exposure: Exposure) -> set[str]:
        return {EXPOSURE_KINDS.get(exposure.type, exposure.type)}

    def get_description(self, model: Model, compiled: CompiledModel) -> str:
        text = (model.description or "").strip()
        sink = model.sink_config
        if model.sql is None and compiled.from_:
            where = sink_target(sink, model.name).format if sink is not None else "a view"
            text += f"\n\nSink of `{compiled.from_}` to {where}."
        elif compiled.sql:
            text += f"\n\n```sql\n{compiled.sql}\n```"  # as the user wrote it (rendered), not translated
        return text.strip()

    def get_code_version(self, model: Model, compiled: CompiledModel) -> str:
        """Compiled SQL + settings: the UI flags a model whose code changed since it last ran."""
        return hashlib.sha256(f"{compiled.sql_hash}:{compiled.config_hash}".encode()).hexdigest()[:16]

    def get_model_metadata(self, model: Model, compiled: CompiledModel,
                           columns: list[tuple[str, str | None]]) -> dict[str, Any]:
        md: dict[str, Any] = {
            "dagster/table_name": f"{self.project_name}.{model.name}",
            "materialized": model.materialized,
        }
        topic = model.topic_settings
        extra = {"key": ", ".join(model.key_columns) or None, "access": model.access_level,
                 "topic": topic.name if topic else None,
                 "ownership": model.ownership.mode if model.ownership else None,
                 "contract": model.contract.model_dump(exclude_none=True) if model.contract else None,
                 "deprecation": {v: d.model_dump(exclude_none=True) for v, d in (model.deprecation or {}).items()}}
        md.update({k: (dg.MetadataValue.json(v) if isinstance(v, dict) else v) for k, v in extra.items() if v})
        if columns:
            md["dagster/column_schema"] = dg.TableSchema(columns=[
                dg.TableColumn(name=n, type=t or "unknown") for n, t in columns])
        if compiled.sql:
            md["sql"] = dg.MetadataValue.md(f"```sql\n{compiled.sql}\n```")
        return md
