"""What a table version was built from, kept inside the version so it swaps in with it (in a Delta
table: in the commit that wrote the version, see :mod:`.delta_table`).

``_streamt_refresh.json`` records the files of every input the version read and a hash of
everything else that decides its rows (the SQL as run, the output format, Spark settings, the
sources' declarations and the inputs' schemas); an aggregation also keeps its merged state in
``_streamt_state/``. Both names start with ``_``, so Spark's readers of the version skip them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.files import atomic_write
from .input_files import Fingerprint, read_fingerprint

RECORD = "_streamt_refresh.json"
STATE = "_streamt_state"
FORMAT = 2  # bump when what a version records changes meaning: older records then mean a full rebuild
# (2: four-part file fingerprints)


@dataclass(frozen=True)
class RefreshRecord:
    config: str  # hash of everything but the input files that decides the rows
    kind: str  # the query's incremental plan kind when this version was written
    inputs: Mapping[str, Mapping[str, Fingerprint]]  # "source:x" / "model:y" -> files read
    files_at_rebuild: int  # data files the last full build wrote (small appended files add up)
    refreshes: int  # incremental refreshes since that build


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
    return RefreshRecord(str(data["config"]), str(data["kind"]), inputs, files_now if at_rebuild < 0 else at_rebuild,
                         int(data["refreshes"]))


def read_record(version: Path | None) -> RefreshRecord | None:
    """The record of ``version``; None when there is none or it cannot be read (a full rebuild)."""
    if version is None:
        return None
    try:
        return _parse(json.loads((version / RECORD).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def record_json(record: RefreshRecord) -> str:
    inputs = {k: {f: list(fp) for f, fp in sorted(files.items())} for k, files in sorted(record.inputs.items())}
    return json.dumps({"format": FORMAT, "config": record.config, "kind": record.kind, "inputs": inputs,
                       "files_at_rebuild": record.files_at_rebuild, "refreshes": record.refreshes}, sort_keys=True)


def record_from_json(text: str, files_now: int) -> RefreshRecord | None:
    """The record a Delta commit carries (:mod:`.delta_table`); None when it is not one of ours."""
    try:
        return _parse(json.loads(text), files_now)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def write_record(version: Path, record: RefreshRecord) -> None:
    atomic_write(version / RECORD, record_json(record))
