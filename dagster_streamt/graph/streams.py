"""Which stream models read a source: the one walk behind the new-data sensors (what a new file or
offset should run) and Kafka lag (whose checkpoint offsets count)."""

from __future__ import annotations

from collections.abc import Mapping

from ..spec.models import Model
from .graph import Graph, split_id


def stream_readers(graph: Graph, models: Mapping[str, Model], source: str) -> list[str]:
    """The enabled stream models reading ``source`` directly or through views (a view is inlined into
    the stream that reads it, so that stream reads the source); sorted.

    Example: ``stream_readers(loaded.graph, loaded.project.models, "orders")`` -> ``["orders_clean"]``.
    """
    out: set[str] = set()
    seen: set[str] = set()
    frontier = [f"source.{source}"]
    while frontier:
        for nid in graph.downstream_of(frontier.pop()):
            kind, name = split_id(nid)
            model = models.get(name)
            if kind != "model" or nid in seen or model is None or not model.enabled:
                continue
            seen.add(nid)
            if model.materialized == "stream":
                out.add(name)
            elif model.materialized == "view":
                frontier.append(nid)
    return sorted(out)
