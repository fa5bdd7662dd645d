"""How a stream model writes its result, decided from what its SQL does.

Spark appends to a stream's output only rows that are final. A windowed aggregation's rows are final
once the watermark passes the window (append); an aggregation without a window changes whenever data
arrives, like a Flink updating table, so its whole result is rewritten each run (complete). An explicit
``advanced.spark.output_mode`` wins. Pure Python: the Spark layer and validation share it.
"""

from __future__ import annotations

from ..spec.models import Model
from ..spec.project import Project
from ..sql import SqlFeatures, analyze, parse_query
from .compiled import bind, relation_name
from .render import RenderError, render_once


def model_features(project: Project, model: Model) -> SqlFeatures | None:
    """What the model's SQL does (windows, aggregations, joins); None when it cannot be read. Found by
    the compiler (:func:`.compiler.compile_project`), else once per project and model here."""
    template = model.sql_template
    if template is None:
        return None
    known = project.derived.get(("features", model.name))
    if known is not None and known[0] == template:
        return known[1]
    try:
        rendered, calls = render_once(project, model.name, template)
    except RenderError:
        return None
    parsed = parse_query(bind(rendered.sql, calls, lambda kind, name: relation_name(name)))
    features = analyze(parsed.tree) if parsed.tree is not None else None
    project.derived[("features", model.name)] = (template, features)
    return features


def stream_output_mode(project: Project, model: Model) -> str:
    """``append``, ``complete`` or ``update`` for a stream model."""
    explicit = model.advanced.spark.output_mode
    if explicit is not None:
        return explicit
    features = model_features(project, model)
    if features is not None and (features.aggregation or features.distinct or features.over) and not features.windows:
        return "complete"
    return "append"


def recomputed(project: Project, model: Model) -> bool:
    """A stream model with window functions (ROW_NUMBER deduplication or top-N, LAG/LEAD): Flink streams
    them, Spark's streaming engine refuses non-time windows, so each run recomputes the model as a
    table over all its input (its result, like an updating Flink table, is rewritten whole)."""
    if model.materialized != "stream" or model.advanced.spark.output_mode is not None:
        return False
    features = model_features(project, model)
    return features is not None and features.over


def appends(project: Project, model: Model) -> bool:
    """Does this model's output grow by appended rows (so a consumer can read it as a stream)?"""
    return model.materialized == "stream" and stream_output_mode(project, model) == "append"


def real_time_problem(project: Project, model: Model) -> str | None:
    """Why ``advanced.spark.trigger: real_time`` cannot run this model in Spark's Real-time Mode, read from
    the project and the SQL (None: nothing known against it; Spark checks the rest when the query starts).

    Spark 4.2's Real-time Mode runs stateless queries (projections, filters, unions, stream-static
    joins) from Kafka to a Kafka (or foreach) sink, in update output mode. streamt runs it for a stream
    model writing straight to its topic, so the model needs a broker and must hold no state.
    """
    if model.materialized != "stream":
        return f"it is {model.materialized or 'a table'}; Real-time Mode runs stream models (materialized: stream)"
    kafka = project.runtime.kafka
    if kafka is not None and kafka.local_dir:
        return ("Real-time Mode writes the model's topic through a Kafka broker, not to local topic folders "
                "(runtime.kafka.local_dir)")
    if kafka is None or not kafka.bootstrap_servers:
        return ("Real-time Mode writes the model's topic through a Kafka broker, and the project has none "
                "(runtime.kafka.bootstrap_servers)")
    features = model_features(project, model)
    if features is None:
        return None
    stateful = [p for p in (features.windows and "windows", features.aggregation and "aggregation",
                            features.distinct and "DISTINCT", features.over and "window function (OVER)",
                            features.order_by and "ORDER BY") if p]
    stateful += [j for j in features.joins if j != "join"]  # interval and temporal joins keep state
    if stateful:
        return (f"Real-time Mode runs stateless queries only (filters, projections, unions, stream-static "
                f"joins) and this query has state: {features.describe()}")
    return None
