"""What a table version was built from, kept in the Delta commit that wrote it (its ``userMetadata``,
see :mod:`.delta_table`), so the record and the rows can never disagree.

It holds the files of every file input the version read, the Delta version of every table input,
a hash of everything else that decides its rows
(the SQL as run, Spark settings, the sources' declarations and the inputs' schemas), and for an
aggregation the Delta versions of the state tables the rows were computed from (:mod:`.table_state`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .input_files import Fingerprint, read_fingerprint

FORMAT = 3  # bump when what a version records changes meaning: older records then mean a full rebuild
# (2: four-part file fingerprints; 3: tables by Delta version, not by their files)


@dataclass(frozen=True)
class RefreshRecord:
    config: str  # hash of everything but the input files that decides the rows
    kind: str  # the query's incremental plan kind when this version was written
    inputs: Mapping[str, Mapping[str, Fingerprint]]  # "source:x" -> files read
    files_at_rebuild: int  # data files the last full build wrote (small appended files add up)
    refreshes: int  # incremental refreshes since that build
    states: Mapping[str, int] | None = None  # an aggregation's state tables -> the Delta versions it used
    tables: Mapping[str, tuple[str, int]] = field(default_factory=dict)  # "model:y" -> (Delta table id, version read)


def input_key(kind: str, name: str) -> str:
    return f"{kind}:{name}"


def config_hash(parts: Mapping[str, Any]) -> str:
    text = json.dumps({"format": FORMAT, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _parse(data: Any, files_now: int = 0) -> RefreshRecord | None:
    """A record from its JSON form; ``files_at_rebuild`` -1 (a Delta commit cannot know the files it is
    about to write) means the files of the table now, which that full build's commit still is."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    inputs = {k: {f: read_fingerprint(fp) for f, fp in files.items()} for k, files in data["inputs"].items()}
    at_rebuild = int(data["files_at_rebuild"])
    states = data.get("states")
    tables = {str(k): (str(t), int(v)) for k, (t, v) in data.get("tables", {}).items()}
    return RefreshRecord(str(data["config"]), str(data["kind"]), inputs, files_now if at_rebuild < 0 else at_rebuild,
                         int(data["refreshes"]),
                         {str(k): int(v) for k, v in states.items()} if isinstance(states, dict) else None, tables)


def record_json(record: RefreshRecord) -> str:
    inputs = {k: {f: list(fp) for f, fp in sorted(files.items())} for k, files in sorted(record.inputs.items())}
    return json.dumps({"format": FORMAT, "config": record.config, "kind": record.kind, "inputs": inputs,
                       "files_at_rebuild": record.files_at_rebuild, "refreshes": record.refreshes,
                       "states": dict(sorted(record.states.items())) if record.states is not None else None,
                       "tables": {k: list(v) for k, v in sorted(record.tables.items())}},
                      sort_keys=True)


def record_from_json(text: str, files_now: int) -> RefreshRecord | None:
    """The record a Delta commit carries (:mod:`.delta_table`); None when it is not one of ours."""
    try:
        return _parse(json.loads(text), files_now)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):  # not ours, or damaged
        return None
