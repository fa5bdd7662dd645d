"""How project entities become Dagster asset keys, groups, owners, tags, kinds and metadata.

Subclass ``StreamtTranslator`` and pass it to ``build_definitions`` to change any of them,
like dagster-dbt's translator. The keys it gives are recorded once in the code location's key map
(``key_map``), which every CLI command and sensor reads: a subclass changes keys everywhere.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import dagster as dg

from ..compile.compiled import CompiledModel
from ..compile.render import partition_parameters
from ..spec.connectors import sink_target
from ..spec.models import Exposure, Model, Source, Test
from ..spec.names import safe_identifier

_OWNER_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
EXPOSURE_KINDS = {"dashboard": "dashboard", "application": "application", "api": "api",
                  "ml_training": "ml", "ml_inference": "ml", "notebook": "notebook", "analysis": "notebook"}



def shown_sql(model: Model, compiled: CompiledModel) -> str:
    """A model's SQL as the UI shows it: a partitioned model's with its partition variables as
    parameters (each run binds its own window), not the placeholder dates compilation renders."""
    sql = compiled.sql or ""
    return partition_parameters(sql) if model.partitioned_by is not None else sql

class StreamtTranslator:
    """How streamt entities become Dagster assets: keys, groups, owners, tags, descriptions.

    The extension point for a code location's naming: subclass it in the project's
    ``definitions.py`` and pass it to ``build_definitions``. The CLI loads that
    file, so ``streamt run``, ``backfill``, ``status``, sensors and OpenLineage use the same keys as
    the UI. Override any ``get_*`` method; each receives the entity as written in the project
    (``Model``, ``Source``, ``Exposure``, ``Test``: their fields are the YAML keys).

    Args:
        project_name: The project's name (``project.name`` in ``stream_project.yml``); the default
            group name and the prefix of ``dagster/table_name``.

    Examples:
        >>> import dagster as dg
        >>> from dagster_streamt import StreamtTranslator, build_definitions
        >>> class Prefixed(StreamtTranslator):
        ...     def get_model_key(self, model):
        ...         return dg.AssetKey(["shop", model.name])
        ...     def get_asset_spec(self, entity, spec):
        ...         return spec.merge_attributes(tags={"team": "data-eng"})
        >>> defs = build_definitions("project", translator=Prefixed("shop"))
        >>> specs = {s.key.to_user_string(): s for s in defs.resolve_all_asset_specs()}
        >>> specs["shop/orders_clean"].tags["team"]
        'data-eng'
    """

    def __init__(self, project_name: str) -> None:
        self.project_name = project_name

    # keys ---------------------------------------------------------------------------------
    def get_model_key(self, model: Model) -> dg.AssetKey:
        """The asset key of a model. Recorded in the key map: every command and sensor uses it.

        Args:
            model: The model as written in the project.

        Returns:
            The model's asset key; by default ``[model.name]``.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_model_key(loaded.project.models["orders_clean"])
            AssetKey(['orders_clean'])
        """
        return dg.AssetKey([model.name])

    def get_source_key(self, source: Source) -> dg.AssetKey:
        """The asset key of a source (an external asset, observable for Kafka topics).

        Args:
            source: The source as written in the project.

        Returns:
            The source's asset key; by default ``["sources", source.name]``.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_source_key(loaded.project.sources["orders_raw"])
            AssetKey(['sources', 'orders_raw'])
        """
        return dg.AssetKey(["sources", source.name])

    def get_exposure_key(self, exposure: Exposure) -> dg.AssetKey:
        """The asset key of an exposure (a dashboard, application, ... downstream of what it consumes).

        Args:
            exposure: The exposure as written in the project.

        Returns:
            The exposure's asset key; by default ``["exposures", exposure.name]``.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_exposure_key(loaded.project.exposures["billing_service"])
            AssetKey(['exposures', 'billing_service'])
        """
        return dg.AssetKey(["exposures", exposure.name])

    def get_check_name(self, test: Test) -> str:
        """The asset check name of a data test (one check per test).

        Args:
            test: The test as written in ``tests/``.

        Returns:
            A Dagster check name: letters, digits and ``_`` only (``-`` and ``.`` become ``_``).

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_check_name(loaded.project.tests["orders_clean_quality"])
            'orders_clean_quality'
        """
        return safe_identifier(test.name)

    def get_asset_spec(self, entity: Model | Source | Exposure, spec: dg.AssetSpec) -> dg.AssetSpec:
        """The last word on each asset's spec, built from the other methods.

        Keys come from the ``get_*_key`` methods only (dependencies and the CLI use them), so the
        returned spec must keep ``spec.key``.

        Args:
            entity: The model, source or exposure the spec describes.
            spec: The spec built from the other methods.

        Returns:
            The spec to use: ``spec`` itself by default, or a copy changed with
                ``spec.replace_attributes(...)`` / ``spec.merge_attributes(...)``.

        Examples:
            >>> import dagster as dg
            >>> from dagster_streamt import StreamtTranslator, load
            >>> model = load("project").project.models["orders_clean"]
            >>> spec = dg.AssetSpec("orders_clean")
            >>> StreamtTranslator("shop").get_asset_spec(model, spec) is spec
            True
        """
        return spec

    # attributes ---------------------------------------------------------------------------
    def get_group_name(self, model: Model) -> str:
        """The asset group of a model.

        Args:
            model: The model as written in the project.

        Returns:
            The model's ``group``, else the project name, as a Dagster group name.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_group_name(loaded.project.models["orders_clean"])
            'shop'
        """
        return re.sub(r"[^A-Za-z0-9_]", "_", model.group or self.project_name)

    def get_owners(self, entity: Model | Source | Exposure) -> list[str]:
        """The Dagster owners of an asset.

        Args:
            entity: The model, source or exposure.

        Returns:
            ``owner`` as an e-mail address, or as ``team:<owner>``; empty without an owner.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_owners(loaded.project.models["orders_clean"])
            ['team:orders-team']
        """
        owner = entity.owner
        if not owner:
            return []
        return [owner if _OWNER_EMAIL.match(owner) or owner.startswith("team:") else f"team:{owner}"]

    def get_tags(self, entity: Model | Source | Exposure) -> dict[str, str]:
        """The Dagster tags of an asset.

        Args:
            entity: The model, source or exposure.

        Returns:
            The project tags as valueless Dagster tags (characters Dagster refuses become ``_``).

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_tags(loaded.project.models["orders_clean"])
            {'critical': '', 'orders': ''}
        """
        # Dagster tag keys allow [A-Za-z0-9_.-]; project tags are shown as valueless tags
        return {re.sub(r"[^A-Za-z0-9_.-]", "_", t)[:63]: "" for t in sorted(entity.tags)}

    def get_model_kinds(self, model: Model) -> set[str]:
        """The kinds (UI badges) of a model's asset.

        Args:
            model: The model as written in the project.

        Returns:
            ``spark`` and the model's materialization.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> sorted(t.get_model_kinds(loaded.project.models["orders_clean"]))
            ['spark', 'stream']
        """
        return {"spark", model.materialized or "table"}

    def get_source_kinds(self, source: Source) -> set[str]:
        """The kinds of a source's asset.

        Args:
            source: The source as written in the project.

        Returns:
            The source's format (``json``, ``kafka``, ``jdbc``, ...).

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_source_kinds(loaded.project.sources["orders_raw"])
            {'json'}
        """
        return {source.resolved_format}

    def get_exposure_kinds(self, exposure: Exposure) -> set[str]:
        """The kinds of an exposure's asset.

        Args:
            exposure: The exposure as written in the project.

        Returns:
            Its ``type`` (``ml_training`` and ``ml_inference`` become ``ml``, ``analysis`` ``notebook``).

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> t.get_exposure_kinds(loaded.project.exposures["billing_service"])
            {'application'}
        """
        return {EXPOSURE_KINDS.get(exposure.type, exposure.type)}

    def get_description(self, model: Model, compiled: CompiledModel) -> str:
        """The asset description of a model, shown in the UI.

        Args:
            model: The model as written in the project.
            compiled: The compiled model (its rendered SQL, its ``from`` input).

        Returns:
            The model's ``description``, then its SQL as written (rendered), or for a sink without
                SQL the sentence naming its input and target.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> text = t.get_description(loaded.project.models["orders_clean"],
            ...                          loaded.compiled.models["orders_clean"])
            >>> "```sql" in text
            True
        """
        text = (model.description or "").strip()
        sink = model.sink_config
        if model.sql is None and compiled.from_:
            where = sink_target(sink, model.name).format if sink is not None else "a view"
            text += f"\n\nSink of `{compiled.from_}` to {where}."
        elif compiled.sql:
            text += f"\n\n```sql\n{shown_sql(model, compiled)}\n```"  # as the user wrote it (rendered), not translated
        return text.strip()

    def get_code_version(self, model: Model, compiled: CompiledModel) -> str:
        """The Dagster code version of a model: the UI flags a model whose code changed since it last ran.

        Args:
            model: The model as written in the project.
            compiled: The compiled model.

        Returns:
            16 hex digits hashing the compiled SQL and the settings that decide the model's rows.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> len(t.get_code_version(loaded.project.models["orders_clean"],
            ...                        loaded.compiled.models["orders_clean"]))
            16
        """
        return hashlib.sha256(f"{compiled.sql_hash}:{compiled.config_hash}".encode()).hexdigest()[:16]

    def get_model_metadata(self, model: Model, compiled: CompiledModel,
                           columns: list[tuple[str, str | None]]) -> dict[str, Any]:
        """The definition metadata of a model's asset.

        Args:
            model: The model as written in the project.
            compiled: The compiled model.
            columns: The output columns as ``(name, type)``; the type is None when unknown.

        Returns:
            ``dagster/table_name``, ``materialized``, the column schema, the SQL and, when set, key,
                access, topic, ownership, contract and deprecation.

        Examples:
            >>> from dagster_streamt import StreamtTranslator, load
            >>> loaded = load("project")
            >>> t = StreamtTranslator("shop")
            >>> md = t.get_model_metadata(loaded.project.models["orders_clean"],
            ...                           loaded.compiled.models["orders_clean"], [("order_id", "bigint")])
            >>> md["dagster/table_name"], md["materialized"]
            ('shop.orders_clean', 'stream')
        """
        md: dict[str, Any] = {"dagster/table_name": f"{self.project_name}.{model.name}",
                              "materialized": model.materialized}
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
            md["sql"] = dg.MetadataValue.md(f"```sql\n{shown_sql(model, compiled)}\n```")
        return md
