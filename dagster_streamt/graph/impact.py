"""Impact summary ("changes to X will affect ...")."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..core.ids import name_of
from .graph import Graph


@dataclass(frozen=True)
class Impact:
    node: str
    models: tuple[str, ...]
    sinks: tuple[str, ...]
    exposures: tuple[str, ...]
    tests: tuple[str, ...]
    owners: tuple[str, ...]
    tags: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}

    def sentence(self, name: str) -> str:
        parts = []
        for label, items in (("model", self.models), ("sink", self.sinks), ("exposure", self.exposures)):
            if items:
                names = ", ".join(name_of(i) for i in items)
                parts.append(f"{len(items)} {label}{'s' if len(items) != 1 else ''}: {names}")
        if not parts:
            return f"Changes to {name} affect nothing downstream."
        text = f"Changes to {name} will affect: " + "; ".join(parts)
        if self.owners:
            text += f"\nOwners to notify: {', '.join(self.owners)}"
        return text


def impact(graph: Graph, nid: str) -> Impact:
    down = sorted(graph.downstream(nid))
    nodes = [graph.nodes[d] for d in down]
    models = tuple(n.id for n in nodes if n.type == "model" and n.materialized != "sink")
    sinks = tuple(n.id for n in nodes if n.type == "model" and n.materialized == "sink")
    exposures = tuple(n.id for n in nodes if n.type == "exposure")
    tests = tuple(n.id for n in nodes if n.type == "test")
    owners = tuple(sorted({n.owner for n in nodes if n.owner and n.type != "test"}))
    tags = tuple(sorted({t for n in nodes if n.type != "test" for t in n.tags}))
    return Impact(nid, models, sinks, exposures, tests, owners, tags)
