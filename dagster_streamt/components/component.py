"""``StreamtProjectComponent``: a streamt project in a ``dg`` project, the way dagster-dbt's
``DbtProjectComponent`` brings a dbt project (``dg scaffold defs
dagster_streamt.StreamtProjectComponent shop``, then a ``defs.yaml``).

No `from __future__ import annotations`: Dagster reads the runtime annotations of the attributes.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import dagster as dg
from dagster.components import ResolutionContext, Resolver

# dagster's own translation resolver, the one dagster-dbt and the other integration components use
# (public module, not re-exported at the top level): same attributes, same templates.
from dagster.components.utils.translation import TranslationFn, TranslationFnResolver
from pydantic import Field

from ..dagster.definitions import build_definitions
from ..dagster.resources import SparkResource, as_spark_resource
from ..dagster.translator import StreamtTranslator
from .scaffolder import StreamtProjectScaffolder
from .translation import TranslatedTranslator


class SparkAttributes(dg.Model):
    """Where the models run; runtime.spark in stream_project.yml sets the rest."""

    master: str | None = Field(default=None, description="Override runtime.spark.master, e.g. spark://host:7077.")
    remote: str | None = Field(default=None, description="Override runtime.spark.remote (sc://host:15002).")
    conf: dict[str, str] = Field(default_factory=dict, description="Spark conf over runtime.spark.conf.")


@cache
def _shared_resource(master: str | None, remote: str | None, conf: tuple[tuple[str, str], ...]) -> SparkResource:
    """One resource object per configuration: components that configure Spark alike share the `spark`
    resource key (Dagster refuses two different objects under one key)."""
    return SparkResource(master=master, remote=remote, conf=dict(conf))


def _resolve_spark(context: ResolutionContext, model: Any) -> Any:
    if model is None:
        return None
    if isinstance(model, str):  # "{{ my_pyspark }}": a resource object from the defs' template vars
        value: Any = context.resolve_value(model)
        try:
            return as_spark_resource(value)
        except TypeError as exc:
            raise ValueError(f"spark: {exc}") from None
    settings = context.resolve_value(model.model_dump(exclude_unset=True))
    return _shared_resource(settings.get("master"), settings.get("remote"),
                            tuple(sorted((str(k), str(v)) for k, v in (settings.get("conf") or {}).items())))


def _resolve_project(context: ResolutionContext, model: str) -> str:
    return str(context.resolve_source_relative_path(context.resolve_value(model, as_type=str)))


@dg.scaffold_with(StreamtProjectScaffolder)
@dataclass
class StreamtProjectComponent(dg.Component, dg.Resolvable):
    """A streamt project (`stream_project.yml`) as Dagster assets run on Spark: one asset per model,
    sources and exposures in the graph, tests as asset checks, the project's schedules and new-data
    sensors, OpenLineage events for every run.

    Scaffold it with `dg scaffold defs dagster_streamt.StreamtProjectComponent shop --project-path
    path/to/streamt_project` (without `--project-path`, a starter project is written next to the
    defs.yaml). The `streamt` CLI (`run`, `backfill`, `test`, `status`, ...) pointed at the project
    finds this dg project and uses the same asset keys, `translation:` included.

    Args:
        project: The streamt project folder: relative to the ``defs.yaml``'s folder, or absolute.
        env: The environment overlay (``environments/<env>.yml``).
        select: Models to include (selection syntax); default every model.
        exclude: Models to leave out.
        translation: dagster-dbt's translation attributes (``key``, ``key_prefix``, ``group_name``,
            ``tags``, ``metadata``, ...) as templates over ``{{ node }}`` and ``{{ spec }}``.
        spark: Spark overrides (``master``, ``remote``, ``conf``) or a template resolving to a
            dagster-pyspark resource.
        column_level_lineage: Compute ``dagster/column_lineage`` from the SQL.

    Examples:
        In a ``defs.yaml``::

            type: dagster_streamt.StreamtProjectComponent
            attributes:
              project: "{{ context.project_root }}/shop"
              select: "tag:orders+"
              translation:
                key: "streamt/{{ node.name }}"
                group_name: shop

        In Python (``dg`` calls ``build_defs``):

        >>> from dagster_streamt import StreamtProjectComponent
        >>> component = StreamtProjectComponent(project="project", select="orders_clean+")
        >>> component.get_translator().project_name
        'shop'
    """

    project: Annotated[str, Resolver(
        _resolve_project, model_field_type=str,
        description="The streamt project folder (holding stream_project.yml): relative to this defs.yaml's "
                    "folder, or absolute with a template such as {{ context.project_root }}/shop.",
        examples=["{{ context.project_root }}/shop", "shop"])]
    env: Annotated[str | None, Resolver.default(
        description="Environment overlay (environments/<env>.yml); default: STREAMT_ENV, else none.",
        examples=["prod"])] = None
    select: Annotated[str | None, Resolver.default(
        description="Models to include, in streamt's selection syntax (name, +name, name+, tag:x, "
                    "materialized:stream, wildcards); default every model.",
        examples=["tag:orders+", "orders_clean+"])] = None
    exclude: Annotated[str | None, Resolver.default(
        description="Models to leave out, in the same selection syntax.", examples=["tag:experimental"])] = None
    translation: Annotated[TranslationFn[Mapping[str, Any]] | None, TranslationFnResolver(
        template_vars_for_translation_fn=lambda node: {"node": node})] = None
    spark: Annotated[Any, Resolver(
        _resolve_spark, model_field_type=SparkAttributes | str | None,
        description="Spark overrides (master, remote, conf), or a template resolving to a dagster-pyspark "
                    "PySparkResource / LazyPySparkResource, whose spark_config goes under runtime.spark.conf.",
        examples=[{"master": "spark://spark-master:7077", "conf": {"spark.executor.memory": "4g"}},
                  "{{ team_pyspark }}"])] = None
    column_level_lineage: Annotated[bool, Resolver.default(
        description="Compute dagster/column_lineage metadata from the SQL when the definitions load.")] = True

    def get_translator(self) -> StreamtTranslator:
        """The translator before ``translation:`` applies; override in a subclass to change keys in Python.

        Returns:
            A ``StreamtTranslator`` for the project (the default one).

        Examples:
            >>> import dagster as dg
            >>> from dagster_streamt import StreamtProjectComponent, StreamtTranslator
            >>> class Warehouse(StreamtTranslator):
            ...     def get_model_key(self, model):
            ...         return dg.AssetKey(["warehouse", model.name])
            >>> class WarehouseComponent(StreamtProjectComponent):
            ...     def get_translator(self):
            ...         return Warehouse("shop")
            >>> WarehouseComponent(project="project").get_translator().get_model_key(
            ...     type("Model", (), {"name": "orders_clean"})())
            AssetKey(['warehouse', 'orders_clean'])
        """
        from ..api import load_or_raise

        return StreamtTranslator(load_or_raise(self.project, self.env).project.name)

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        """The project's definitions, as ``build_definitions`` builds them (``dg`` calls this).

        Args:
            context: The ``dg`` load context (the ``defs.yaml``'s folder, for error messages).

        Returns:
            The ``Definitions`` of the selected models, translated by ``translation:``.

        Raises:
            ValueError: The project has errors; the message names the ``defs.yaml`` and each ``file:line``.

        Examples:
            ``dg check defs``, ``dg list defs`` and ``dg dev`` call it; tests do it through
            ``dagster.components.testing.create_defs_folder_sandbox`` (``tests/dagster/test_component.py``).
        """
        from ..api import load_or_raise
        from ..spec.errors import ProjectError
        from ..spec.loader import find_root_file

        if find_root_file(Path(self.project)) is None:
            raise FileNotFoundError(f"{context.path / 'defs.yaml'}: project {self.project} has no stream_project.yml "
                                    "(set `project:` to the streamt project's folder; a relative path starts at "
                                    "this defs.yaml's folder)")
        try:
            loaded = load_or_raise(self.project, self.env)
            translator = self.get_translator()
            if self.translation is not None:
                translator = TranslatedTranslator(translator, self.translation, loaded)
            return build_definitions(self.project, self.env, loaded=loaded, translator=translator,
                                     spark=self.spark or _shared_resource(None, None, ()), select=self.select,
                                     exclude=self.exclude, column_level_lineage=self.column_level_lineage)
        except ProjectError as exc:  # file:line of each error, under the defs.yaml that loaded the project
            raise ValueError(f"{context.path / 'defs.yaml'}: streamt project {self.project}: {exc}") from None
