"""What each model's last successful run ran, as the Dagster instance recorded it: the definition in its
latest materialization (``streamt/definition``, :mod:`dagster_streamt.changes.record`), else the code
version Dagster stamped on it (a run by an earlier version of this package recorded no definition)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import dagster as dg

from ..core import metadata as meta
from .key_map import KeyMap
from .run_history import md_value

CODE_VERSION_TAG = "dagster/code_version"  # Dagster's data provenance on every materialization


@dataclass(frozen=True)
class LastDefinition:
    record: dict[str, Any] | None  # None: that run recorded no definition
    code_version: str | None
    run_id: str


def last_definitions(instance: dg.DagsterInstance, keys: KeyMap, names: Iterable[str]) -> dict[str, LastDefinition]:
    """Per model of ``names`` ever materialized under ``keys``: what its latest materialization recorded."""
    out: dict[str, LastDefinition] = {}
    for name in sorted(names):
        event = instance.get_latest_materialization_event(keys.model(name))
        materialization = event.asset_materialization if event is not None else None
        if event is None or materialization is None:
            continue
        record = md_value(materialization.metadata, meta.DEFINITION)
        out[name] = LastDefinition(record if isinstance(record, dict) else None,
                                   (materialization.tags or {}).get(CODE_VERSION_TAG), event.run_id)
    return out


def removed_models(instance: dg.DagsterInstance, keys: KeyMap, project: str) -> dict[str, str]:
    """Models of ``project`` that a run materialized and the project no longer has (a removed or renamed
    model): name -> the run id that last materialized it. Only records that name the project count, so
    another project sharing the instance is never taken for this one's past."""
    current = set(keys.models.values())
    out: dict[str, str] = {}
    for key in sorted(instance.get_asset_keys(), key=lambda k: k.to_user_string()):
        if key in current:
            continue
        event = instance.get_latest_materialization_event(key)
        materialization = event.asset_materialization if event is not None else None
        record = md_value(materialization.metadata, meta.DEFINITION) if materialization is not None else None
        if event is not None and isinstance(record, dict) and record.get("project") == project:
            name = str((record.get("model") or {}).get("name") or key.path[-1])
            out[name] = event.run_id
    return out

