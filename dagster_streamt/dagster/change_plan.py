"""What a run would do now, model by model, against what each model's last run ran (the definition
recorded in its materialization): the plan ``streamt plan`` prints, ``streamt run --changed`` runs and
the changed-models sensor launches. No Spark: the Dagster instance, the models' inputs and delta-rs."""

from __future__ import annotations

from dataclasses import replace

import dagster as dg

from ..changes import classify
from ..changes.classify import Change, ChangeSet
from ..changes.facets import facets_of
from ..changes.record import facets_from_records
from ..checks.assertions import relations_read
from ..checks.results import model_tests
from ..core.ids import name_of, node_id
from ..core.loaded import LoadedProject
from ..spark.up_to_date import Definitions, unchanged_models
from .key_map import KeyMap
from .last_definitions import LastDefinition, last_definitions, removed_models
from .translator import StreamtTranslator


def _up_to_date(loaded: LoadedProject, order: list[str]) -> set[str]:
    """The models a run would leave as they are (nothing new since their last run), decided without Spark."""
    defs = Definitions(loaded.compiled, model_tests(loaded.project.tests), relations_read)  # the default resource's
    return set(unchanged_models(loaded.project, defs, order))


def without_record(loaded: LoadedProject, change: Change, last: LastDefinition) -> Change:
    """A model whose last run recorded no definition (an earlier version of this package): judged by the
    code version Dagster stamped on that run."""
    model = loaded.project.models[change.name]
    now = StreamtTranslator(loaded.project.name).get_code_version(model, loaded.compiled.models[change.name])
    if last.code_version == now:
        return replace(change, change="unchanged", reasons=("same code version as its last run",), refresh="none")
    return replace(change, change="breaking", refresh="full",
                   reasons=("changed since its last run, which recorded no definition to compare with "
                            "(run before this version): rebuilt to be sure",))


def plan_changes(loaded: LoadedProject, names: list[str], instance: dg.DagsterInstance, keys: KeyMap) -> ChangeSet:
    """Each of ``names`` (and each source) classed against what its last run ran, with what a run would
    refresh (``full``, ``incremental``, ``none``) and in what order; models removed since are destructive.

    >>> from dagster_streamt import load
    >>> loaded = load("project")
    >>> keys = KeyMap.build(loaded, StreamtTranslator(loaded.project.name), set(loaded.project.models), None)
    >>> plan = plan_changes(loaded, ["orders_clean"], dg.DagsterInstance.ephemeral(), keys)
    >>> [(c.name, c.change, c.refresh) for c in plan.changes if c.kind == "model"]
    [('orders_clean', 'new', 'full')]
    """
    head = facets_of(loaded)
    last = last_definitions(instance, keys, [n for n in names if n in keys.models])
    gone = removed_models(instance, keys, loaded.project.name)
    base = facets_from_records(loaded, head, {n: d.record for n, d in last.items() if d.record is not None})
    classed = classify(loaded, loaded, base_facets=base, head_facets=head)
    graph = loaded.graph
    everything = [name_of(n) for n in graph.topological_order(graph.of_type("model"))]
    fresh = _up_to_date(loaded, everything)
    wanted = set(names)
    changes: list[Change] = []
    for change in classed.changes:
        if change.kind == "model" and change.name not in wanted:
            continue
        if change.kind == "model" and change.name not in last:
            change = replace(change, reasons=("never run here",))
        elif change.kind == "model" and last[change.name].record is None:
            change = without_record(loaded, change, last[change.name])
        if change.kind == "model" and change.refresh == "none" and change.name not in fresh:
            change = replace(change, refresh="incremental")
        changes.append(change)
    for name, run_id in sorted(gone.items()):
        if name not in loaded.project.models:
            changes.append(Change(name, "model", "destructive", (
                f"removed since its last run ({run_id[:8]}): its table, topic or sink is left as it is and "
                "no longer refreshed",)))
    changes.sort(key=lambda c: (c.kind != "source", c.name))
    runs = {c.name for c in changes if c.kind == "model" and c.refresh != "none"}
    order = tuple(name_of(n) for n in graph.topological_order({node_id("model", m) for m in runs}))
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.change] = counts.get(c.change, 0) + 1
    return ChangeSet(tuple(changes), order, counts)
