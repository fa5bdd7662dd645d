"""``advanced.spark.trigger: real_time`` on a model Spark's Real-time Mode cannot run (STR046): state in
its SQL, no Kafka broker, not a stream model, or a stream model upstream (read from the warehouse's
files, which Real-time Mode cannot read). Found at load time instead of when ``streamt run --continuous``
starts the query."""

from __future__ import annotations

from ..compile.modes import real_time_problem
from ..graph.graph import Graph, node_id, split_id
from ..spec.errors import Diagnostics
from ..spec.project import Project


def check_real_time(project: Project, graph: Graph) -> Diagnostics:
    diags = Diagnostics()
    for name, model in sorted(project.models.items()):
        try:
            if model.advanced.spark.real_time is None:
                continue
        except ValueError:  # a malformed interval is the spec's error already
            continue
        why = real_time_problem(project, model)
        if why is None:
            upstream = sorted(n for kind, n in map(split_id, graph.upstream_of(node_id("model", name)))
                              if kind == "model" and n in project.models
                              and project.models[n].materialized == "stream")
            if upstream:
                why = (f"it reads stream model {upstream[0]} (its stored files), and Real-time Mode reads "
                       "Kafka sources only")
        if why is not None:
            file, line = project.where("model", name, "advanced", "spark", "trigger")
            diags.add("STR046", f"model {name!r}: advanced.spark.trigger real_time: {why}", file=file, line=line,
                      hint="remove the real_time trigger (micro-batches) or make the model a stateless "
                           "stream from Kafka sources")
    return diags
