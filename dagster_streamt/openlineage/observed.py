"""Parsed versus observed lineage: compare the project's graph with OpenLineage events that really
ran (ours, or any producer's such as the OpenLineage Spark listener), by dataset identity."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..core.loaded import LoadedProject
from .naming import ProjectNaming

DATA = ("source", "model")


@dataclass
class LineageDiff:
    observed_only: list[tuple[str, str]] = field(default_factory=list)  # seen at run time, not declared
    declared_only: list[tuple[str, str]] = field(default_factory=list)  # declared, never observed
    never_ran: list[str] = field(default_factory=list)  # models with no output in the events
    events: int = 0
    bad_lines: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _index(loaded: LoadedProject) -> dict[tuple[str, str], str]:
    """(namespace, name) of every dataset identity (and symlink) -> node id."""
    naming = ProjectNaming(loaded.project)
    out: dict[tuple[str, str], str] = {}
    found = [*((f"source.{n}", ds) for n in loaded.project.sources for ds in naming.source(n)),
             *((f"model.{n}", naming.model(n)) for n in loaded.compiled.models)]
    for node, ds in found:
        out[(ds.namespace, ds.name)] = node
        for link in ds.symlinks:
            out.setdefault((link.namespace, link.name), node)
    return out


def _node(index: dict[tuple[str, str], str], ds: dict[str, object]) -> str:
    ns, name = str(ds.get("namespace", "")), str(ds.get("name", ""))
    hit = index.get((ns, name))
    if hit is None:  # a Spark listener may name a version folder (…/model/v=…) or the data dir
        parent = name.rstrip("/").rsplit("/", 1)[0] if "/" in name else name
        hit = index.get((ns, parent))
    if hit is None:
        facets = ds.get("facets")
        symlinks = facets.get("symlinks") if isinstance(facets, dict) else None
        for link in (symlinks.get("identifiers") or [] if isinstance(symlinks, dict) else []):
            hit = index.get((str(link.get("namespace")), str(link.get("name"))))
            if hit:
                break
    return hit or f"external:{ns}/{name}"


def compare(loaded: LoadedProject, events_file: Path) -> LineageDiff:
    index = _index(loaded)
    diff = LineageDiff()
    observed: set[tuple[str, str]] = set()
    produced: set[str] = set()
    for i, line in enumerate(events_file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            diff.bad_lines.append(i)
            continue
        diff.events += 1
        outputs = [_node(index, o) for o in event.get("outputs") or []]
        inputs = [_node(index, x) for x in event.get("inputs") or []]
        produced.update(outputs)
        observed.update((a, b) for a in inputs for b in outputs if a != b)
    declared = {(s, d) for s, d in loaded.graph.edges()
                if s.split(".")[0] in DATA and d.split(".")[0] in DATA}
    diff.observed_only = sorted(observed - declared)
    diff.declared_only = sorted(e for e in declared - observed if e[1] in produced)
    diff.never_ran = sorted(f"model.{m}" for m in loaded.compiled.models if f"model.{m}" not in produced)
    return diff


def diff_text(diff: LineageDiff) -> str:
    out = [f"Compared {diff.events} OpenLineage event(s) with the project graph."]
    if diff.bad_lines:
        out.append(f"  skipped {len(diff.bad_lines)} line(s) that are not JSON: {diff.bad_lines[:10]}")
    out.append("Observed at run time but not declared in the project:")
    out += [f"  {a} -> {b}" for a, b in diff.observed_only] or ["  (none)"]
    out.append("Declared but never observed (the model ran without reading it):")
    out += [f"  {a} -> {b}" for a, b in diff.declared_only] or ["  (none)"]
    if diff.never_ran:
        out.append(f"Models with no run in these events: {', '.join(n.split('.', 1)[1] for n in diff.never_ran)}")
    return "\n".join(out)
