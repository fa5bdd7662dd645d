"""Each model and source of a project classed against a base version of it, as a change gate needs:

- ``new``, ``unchanged``;
- ``metadata``: description, owner, tags, tests, settings with no meaning on Spark: nothing reruns;
- ``non_breaking``: output columns only added: the model rebuilds, its downstream need not;
- ``breaking``: existing rows would change (a filter, an expression, a join, a setting) or a column is
  removed or retyped: the model and everything downstream rebuild, and the downstream columns that read
  a removed, retyped or recomputed column are named (column lineage);
- ``state_incompatible``: a stream whose checkpointed state cannot carry on (group keys, windows,
  aggregations or joins changed): a new checkpoint and a full refresh; an in-flight window is lost;
- ``destructive``: a model or source removed, renamed, or its topic or sink target moved (the old one is
  left as it is, and whoever reads it reads stale data).

The base is any other version of the project (another git revision: ``streamt diff``); the lineage
and exposures are the head's, or the base's for what the head no longer has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.ids import name_of, node_id
from ..core.loaded import LoadedProject
from ..graph.impact import impact
from ..lineage.column_types import ColumnRef, ProjectColumnLineage
from .facets import ModelFacets, ProjectFacets, facets_of
from .query_diff import compare

# least to most severe: ``--fail-on X`` fails on X and anything after it
CLASSES = ("unchanged", "metadata", "new", "non_breaking", "breaking", "state_incompatible", "destructive")
REBUILDS = frozenset({"new", "non_breaking", "breaking", "state_incompatible"})
REACHES_DOWNSTREAM = frozenset({"breaking", "state_incompatible"})  # rows downstream read have changed


@dataclass(frozen=True)
class Change:
    """One model or source: its class, why, what refreshes and what it reaches downstream."""

    name: str
    kind: str  # model | source
    change: str  # one of CLASSES
    reasons: tuple[str, ...] = ()
    refresh: str = "none"  # full | none (a diff between definitions knows of no new data)
    affected: tuple[str, ...] = ()  # downstream node ids
    columns: tuple[str, ...] = ()  # downstream columns that read a removed, retyped or recomputed column
    exposures: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["reason"] = self.reason
        return {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(data.items())}


@dataclass(frozen=True)
class ChangeSet:
    changes: tuple[Change, ...]  # sources first, then models, each by name
    order: tuple[str, ...] = ()  # the models that refresh, in the order a run applies them
    counts: Mapping[str, int] = field(default_factory=dict)

    def worst(self) -> str:
        return max((c.change for c in self.changes), key=CLASSES.index, default="unchanged")

    def fails(self, threshold: str) -> list[Change]:
        """The changes at ``threshold`` or worse (``--fail-on``)."""
        return [c for c in self.changes if CLASSES.index(c.change) >= CLASSES.index(threshold)]

    def to_dict(self) -> dict[str, Any]:
        return {"changes": [c.to_dict() for c in self.changes], "order": list(self.order),
                "counts": dict(sorted(self.counts.items())), "worst": self.worst()}


def _mid(name: str) -> str:
    return node_id("model", name)


def _types_changed(old: ModelFacets, new: ModelFacets) -> list[str]:
    return sorted(c for c in old.types if c in new.types and old.types[c].lower() != new.types[c].lower())


def _settings_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The keys whose values differ (a key one side lacks counts as null: a record written before a key
    existed is not a change)."""
    return sorted(k for k in {*old, *new} if old.get(k) != new.get(k))


@dataclass(frozen=True)
class _Verdict:
    change: str
    reasons: list[str]
    touched: frozenset[str] = frozenset()  # old columns removed, retyped or computed differently
    rows_changed: bool = False  # every row may differ (a clause, a setting): every reader downstream rebuilds


def _model_class(old: ModelFacets, new: ModelFacets) -> _Verdict:
    query = compare(old.sql, new.sql)
    settings = _settings_changed(old.settings, new.settings)
    if old.target is not None and old.target != new.target:
        return _Verdict("destructive", [f"writes {new.target or 'nothing outside the warehouse'} instead of "
                                        f"{old.target} (the old one is left as it is)"], rows_changed=True)
    retyped = _types_changed(old, new)
    if query.same and not settings and not retyped:
        described = _settings_changed(old.metadata, new.metadata)
        return _Verdict("metadata", [f"{k} changed" for k in described]) if described else _Verdict("unchanged", [])
    reasons = [f"column {c} removed" for c in query.removed]
    reasons += [f"column {c} computed differently" for c in query.changed_columns]
    reasons += [f"column {c} retyped {old.types[c]} -> {new.types[c]}" for c in retyped]
    reasons += list(query.clauses) + [f"setting {k} changed" for k in settings]
    touched = frozenset({*query.removed, *query.changed_columns, *retyped})
    if new.stateful_stream and old.stateful_stream and (query.state or "event_time" in settings):
        state = list(query.state) + (["event_time (watermark) changed"] if "event_time" in settings else [])
        state.append("the stream's state cannot carry on: a new checkpoint and a full refresh (a window still "
                     "open loses what it held)")
        return _Verdict("state_incompatible", state, touched, rows_changed=True)
    if query.only_added and not settings and not retyped:
        return _Verdict("non_breaking", [f"column {c} added" for c in query.added])
    if old.materialized != new.materialized:
        reasons.insert(0, f"materialized {old.materialized} -> {new.materialized}")
    only_columns = not query.clauses and not settings and old.materialized == new.materialized and bool(touched)
    return _Verdict("breaking", reasons or ["the query changed (its columns' order or shape)"], touched,
                    rows_changed=not only_columns)


def _readers(lineage: ProjectColumnLineage, model: str, columns: frozenset[str]) -> tuple[list[str], set[str]]:
    """Who reads ``model``'s ``columns``: the downstream columns computed from them (all the way down) and
    the models that join, filter, group or sort on them (their every row may change), as lines; and
    the models among them."""
    found: set[str] = set()
    models: set[str] = set()
    for col in sorted(columns):
        for hit in lineage.downstream(model, col):
            found.add(f"{hit.ref.relation}.{hit.ref.column}")
            models.add(hit.ref.relation)
        for reader, ml in lineage.models.items():
            for edge in ml.dataset:
                if edge.source == ColumnRef(model, col):
                    found.add(f"{reader} ({edge.subtype.lower().replace('_', ' ')} on {col})")
                    models.add(reader)
    return sorted(found), models


def _change(loaded: LoadedProject, nid: str, change: str, reasons: list[str] | tuple[str, ...], *,
            refresh: str = "none", columns: tuple[str, ...] = ()) -> Change:
    """A change, with what is downstream of ``nid`` in ``loaded`` (tests left out), its exposures and owners."""
    reached = impact(loaded.graph, nid)
    down = tuple(n for n in sorted(loaded.graph.downstream(nid)) if loaded.graph.nodes[n].type != "test")
    return Change(name_of(nid), nid.split(".", 1)[0], change, tuple(reasons), refresh, down, columns,
                  reached.exposures, reached.owners)


def _renames(base: ProjectFacets, head: ProjectFacets) -> dict[str, str]:
    """Removed models whose definition a new model has, as it is now (old name -> new name)."""
    gone = {n: m for n, m in base.models.items() if n not in head.models}
    fresh = {n: m for n, m in head.models.items() if n not in base.models}
    renames: dict[str, str] = {}
    for old_name, old in sorted(gone.items()):
        for new_name, new in sorted(fresh.items()):
            if new_name not in renames.values() and (old.sql, old.settings) == (new.sql, new.settings):
                renames[old_name] = new_name
                break
    return renames


def classify(base: LoadedProject, head: LoadedProject, *, base_facets: ProjectFacets | None = None,
             head_facets: ProjectFacets | None = None) -> ChangeSet:
    """Every model and source of ``head`` (and what ``base`` had and ``head`` has not) classed."""
    old = base_facets or facets_of(base, use_cache=False)
    new = head_facets or facets_of(head)
    changes: list[Change] = []
    rebuilt_by: dict[str, str] = {}  # head model -> why it refreshes (itself, or an upstream change)
    for name in sorted({*old.sources, *new.sources}):
        nid = f"source.{name}"
        if name not in new.sources:
            changes.append(_change(base, nid, "destructive", ["source removed"]))
            continue
        if name not in old.sources:
            changes.append(_change(head, nid, "new", ["new source"]))
            continue
        moved = _settings_changed(old.sources[name], new.sources[name])
        if moved:
            changed = _change(head, nid, "breaking", [f"{k} changed" for k in moved])
            for down in changed.affected:
                if head.graph.nodes[down].type == "model":
                    rebuilt_by.setdefault(name_of(down), f"source {name} changed")
            changes.append(changed)
        elif why := _settings_changed(old.source_metadata[name], new.source_metadata[name]):
            changes.append(_change(head, nid, "metadata", [f"{k} changed" for k in why]))
        else:
            changes.append(_change(head, nid, "unchanged", []))
    renames = _renames(old, new)
    classed: dict[str, _Verdict] = {}
    columns: dict[str, list[str]] = {}
    for name in sorted(new.models):
        if name not in old.models:
            was = next((o for o, n in renames.items() if n == name), None)
            classed[name] = _Verdict("new", [f"renamed from {was}" if was else "new model"])
            continue
        verdict = classed[name] = _model_class(old.models[name], new.models[name])
        if verdict.change not in REBUILDS:
            continue
        columns[name], readers = _readers(old.lineage, name, verdict.touched)
        if verdict.change not in REACHES_DOWNSTREAM:
            continue
        reached = head.graph.downstream_all(_mid(r) for r in readers if r in new.models) | \
            {_mid(r) for r in readers if r in new.models}
        for down in sorted(head.graph.downstream(_mid(name)) if verdict.rows_changed else reached):
            if head.graph.nodes[down].type == "model":
                rebuilt_by.setdefault(name_of(down), f"upstream {name} changed ({verdict.change})")
    for name, verdict in classed.items():
        if verdict.change in REBUILDS:
            rebuilt_by[name] = "its definition changed"
    for name in sorted(old.models):
        if name not in new.models:
            gone = f"renamed to {renames[name]}" if name in renames else "model removed"
            changes.append(_change(base, _mid(name), "destructive",
                                   [f"{gone}: its table, topic or sink is left as it is and no longer refreshed"]))
    for name, verdict in sorted(classed.items()):
        reasons = verdict.reasons
        if verdict.change in ("unchanged", "metadata") and name in rebuilt_by:
            reasons = [*reasons, rebuilt_by[name]]
        elif verdict.change not in ("new", "metadata", "unchanged", "destructive"):
            described = _settings_changed(old.models[name].metadata, new.models[name].metadata)
            reasons = [*reasons, *(f"{k} changed" for k in described)]
        changes.append(_change(head, _mid(name), verdict.change, reasons,
                               refresh="full" if name in rebuilt_by else "none",
                               columns=tuple(columns.get(name, ()))))
    changes.sort(key=lambda c: (c.kind != "source", c.name))
    order = tuple(name_of(n) for n in head.graph.topological_order({_mid(m) for m in rebuilt_by}))
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.change] = counts.get(c.change, 0) + 1
    return ChangeSet(tuple(changes), order, counts)
