"""New data in a source, told to Dagster as a materialization of the source's external asset.

Dagster 1.13 judges a freshness policy by the asset's last *materialization* alone (its freshness
daemon, ``TimeWindowFreshnessPolicyEvaluator``; observations do not count), and an external asset is
never materialized by a run. So whatever looks at a source without Spark (a run of the models that
read it, its new-data sensor, its freshness check) reports one ``AssetMaterialization`` of the
source when its data changed: Dagster's way to record an external asset's update. Its data version
is the source's state (:func:`~dagster_streamt.spark.up_to_date.source_state`: the file listing's
digest, or the topics' offsets), its ``dagster/last_updated_timestamp`` the newest file's time when
files tell it. The same state is never reported twice (the last materialization's data version is
compared), so an idle source adds no event, and downstream models show as stale only when it moved.

Dagster then counts a source's age from when the change was seen, the freshness check from the data's
own time: they agree except for the time between an arrival and the next look. One case would make
them disagree for a whole window, data first seen when it is already older than the policy allows: it
is not reported (the policy keeps counting from the previous update, so both say late).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from ..api import LoadedProject
from ..core.ids import kind_of, name_of, node_id
from .key_map import KeyMap
from .schedules import policy_windows

DATA_VERSION = "dagster/data_version"  # the tag Dagster reads an event's data version from
LAST_UPDATED = "dagster/last_updated_timestamp"  # Dagster's metadata key for an external asset's last update


@dataclass(frozen=True)
class SourceData:
    """What Python can tell of a source's data now, without Spark."""

    version: str  # changes whenever the data does
    last_updated: float | None  # epoch seconds of the newest data, when its files tell it
    files: int | None  # data files, for a file source


def source_data(loaded: LoadedProject, name: str, offsets: dict[str, str | None] | None = None) -> SourceData | None:
    """The source's state now (see the module docstring); None when only Spark can tell (a JDBC or
    table source, a listing with globs, an unreachable broker) or a folder holds no data file."""
    from ..spark.delta.input_files import python_snapshot
    from ..spark.up_to_date import source_state

    project = loaded.project
    snapshot = python_snapshot(project, project.sources[name])
    if snapshot is not None and not snapshot.files:
        return None  # no data (yet): nothing arrived
    state = source_state(project, name, snapshot, offsets)
    if state is None:
        return None
    if snapshot is None:  # a topic: only its end offsets say new records came (retention moves the start)
        ends = {topic: bounds[1] for topic, bounds in json.loads(state).items()}
        return SourceData(hashlib.sha256(json.dumps(ends).encode()).hexdigest()[:24], None, None)
    version = hashlib.sha256(state.encode()).hexdigest()[:24]
    newest = max((fp[1] for fp in snapshot.files.values()), default=None)
    return SourceData(version, newest / 1e9 if newest is not None else None, len(snapshot.files))


def update_event(loaded: LoadedProject, keys: KeyMap, instance: dg.DagsterInstance | None, name: str,
                 data: SourceData, seen_by: str, now: float | None = None) -> dg.AssetMaterialization | None:
    """The materialization reporting ``data`` on source ``name``; None when the source's last one
    carries the same version, or its newest data is already older than its freshness policy allows."""
    key = keys.sources.get(name)
    if key is None:
        return None
    if instance is not None:
        last = instance.get_latest_materialization_event(key)
        if last is not None and last.asset_materialization is not None and \
                (last.asset_materialization.tags or {}).get(DATA_VERSION) == data.version:
            return None
    windows = policy_windows(loaded.project.sources[name].freshness)
    now = time.time() if now is None else now
    if windows is not None and data.last_updated is not None and now - data.last_updated >= windows[0]:
        return None
    md: dict[str, Any] = {"seen_by": seen_by}
    if data.last_updated is not None:
        md[LAST_UPDATED] = dg.MetadataValue.timestamp(data.last_updated)
    if data.files is not None:
        md["files"] = data.files
    return dg.AssetMaterialization(asset_key=key, metadata=md, tags={DATA_VERSION: data.version},
                                   description=f"New data in source {name}, seen by {seen_by}.")


def source_states(loaded: LoadedProject, names: Iterable[str]) -> dict[str, SourceData | None]:
    """:func:`source_data` of each source of ``names`` (one broker call per Kafka source)."""
    offsets: dict[str, str | None] = {}
    return {name: source_data(loaded, name, offsets) for name in sorted(set(names))}


def update_events(loaded: LoadedProject, keys: KeyMap, instance: dg.DagsterInstance | None,
                  states: Mapping[str, SourceData | None], seen_by: str) -> list[dg.AssetMaterialization]:
    """The update events of the sources in ``states`` whose data changed since their last one, sorted."""
    now = time.time()
    events = (update_event(loaded, keys, instance, name, data, seen_by, now)
              for name, data in sorted(states.items()) if data is not None)
    return [e for e in events if e is not None]


def instance_of(context: dg.SensorEvaluationContext) -> dg.DagsterInstance | None:
    """The sensor's instance; None for a context built without one (then every update is reported)."""
    try:
        return context.instance
    except dg.DagsterInvariantViolationError:
        return None


def sources_read(loaded: LoadedProject, models: Sequence[str]) -> list[str]:
    """The sources ``models`` read directly, sorted."""
    g = loaded.graph
    return sorted({name_of(u) for m in models for u in g.upstream_of(node_id("model", m)) if kind_of(u) == "source"})
