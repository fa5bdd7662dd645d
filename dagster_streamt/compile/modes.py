"""How a stream model writes its result, decided from what its SQL does.

Spark appends to a stream's output only rows that are final. A windowed aggregation's rows are final
once the watermark passes the window (append); an aggregation without a window changes whenever data
arrives, like a Flink updating table, so its whole result is rewritten each run (complete). An explicit
``advanced.spark.output_mode`` wins. Pure Python: the Spark layer and validation share it.
"""

from __future__ import annotations

from ..spec.envvars import EnvResolver, project_dotenv
from ..spec.models import Model
from ..spec.project import Project
from ..sql import SqlFeatures, analyze, parse_query
from .render import RenderError, render_sql


def model_features(project: Project, model: Model) -> SqlFeatures | None:
    """What the model's SQL does (windows, aggregations, joins); None when it cannot be read."""
    template = model.sql_template
    if template is None:
        return None
    try:
        rendered = render_sql(model.name, template, variables=project.vars,
                              resolver=EnvResolver(project_dotenv(project.root, project.env)))
    except RenderError:
        return None
    parsed = parse_query(rendered.sql)
    return analyze(parsed.tree) if parsed.tree is not None else None


def stream_output_mode(project: Project, model: Model) -> str:
    """``append``, ``complete`` or ``update`` for a stream model."""
    explicit = model.advanced.spark.output_mode
    if explicit is not None:
        return explicit
    features = model_features(project, model)
    if features is not None and (features.aggregation or features.distinct) and not features.windows:
        return "complete"
    return "append"


def appends(project: Project, model: Model) -> bool:
    """Does this model's output grow by appended rows (so a consumer can read it as a stream)?"""
    return model.materialized == "stream" and stream_output_mode(project, model) == "append"
