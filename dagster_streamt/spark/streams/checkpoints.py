"""Refuse to reuse a checkpoint with a query it no longer fits, and explain Spark's own refusals.

Spark notices some incompatible changes (a source added) but not others until data arrives, and a
changed output schema in a file sink is never noticed: old and new files just disagree. We record
what the checkpoint was built for and compare before starting.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ModelRunError, first_meaningful_line
from ..storage.store import Loc, write_text

FINGERPRINT = "_streamt_query.json"
_SPARK_INCOMPATIBLE = re.compile(
    r"sources in the checkpoint offsets|STATE_STORE_|state schema|StateSchemaNotCompatible|"
    r"STREAMING_STATEFUL_OPERATOR|stateful operator|INVALID_CHECKPOINT|CANNOT_LOAD_STATE_STORE|"
    r"checkpoint location .* (incompatible|different)|Cannot continue", re.I)


def incompatible(model: str, detail: str) -> ModelRunError:
    return ModelRunError(
        f"stream model {model}: the changed query no longer fits its checkpoint ({detail}); its progress "
        f"cannot be reused without losing or mixing data. Run `streamt run --full-refresh {model}` to reset "
        "its checkpoint and output and reprocess all input (stream models reading it need a full refresh too)",
        model)


def is_spark_incompatibility(exc: BaseException) -> bool:
    return bool(_SPARK_INCOMPATIBLE.search(str(exc)))


def has_progress(checkpoint: Loc) -> bool:
    offsets = checkpoint / "offsets"
    return offsets.is_dir() and any(offsets.iterdir())


def _diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out: list[str] = []
    before, after = dict(map(tuple, old.get("schema", []))), dict(map(tuple, new["schema"]))
    added = [c for c in after if c not in before]
    removed = [c for c in before if c not in after]
    retyped = [f"{c} {before[c]} -> {after[c]}" for c in after if c in before and before[c] != after[c]]
    if added:
        out.append(f"output columns added: {', '.join(added)}")
    if removed:
        out.append(f"output columns removed: {', '.join(removed)}")
    if retyped:
        out.append(f"column types changed: {', '.join(retyped)}")
    if old.get("inputs") != new["inputs"]:
        out.append(f"streaming inputs changed from {', '.join(old.get('inputs', [])) or 'none'} "
                   f"to {', '.join(new['inputs'])}")
    for key in ("output_mode", "format"):
        if old.get(key) != new[key]:
            out.append(f"{key.replace('_', ' ')} changed from {old.get(key)} to {new[key]}")
    return out


def check_fingerprint(checkpoint: Loc, model: str, fingerprint: dict[str, Any]) -> None:
    """Raise :func:`incompatible` when a checkpoint with progress was made for another query shape."""
    path = checkpoint / FINGERPRINT
    if not has_progress(checkpoint) or not path.is_file():
        return
    diffs = _diff(json.loads(path.read_text(encoding="utf-8")), fingerprint)
    if diffs:
        raise incompatible(model, "; ".join(diffs))


def save_fingerprint(checkpoint: Loc, fingerprint: dict[str, Any]) -> None:
    write_text(checkpoint / FINGERPRINT, json.dumps(fingerprint, indent=2, sort_keys=True))


def explain_failure(model: str, exc: BaseException) -> BaseException:
    """Spark's checkpoint refusals become the full-refresh advice; other errors pass through."""
    if is_spark_incompatibility(exc):
        return incompatible(model, first_meaningful_line(exc))
    return exc


def query_id(checkpoint: Loc) -> str:
    """The streaming query's id: stable across restarts of one checkpoint, new after a full refresh."""
    return str(json.loads((checkpoint / "metadata").read_text(encoding="utf-8"))["id"]).replace("-", "")
