"""Rows added, removed and changed between two versions of a Delta table, read with delta-rs' time travel
(no Spark): what ``streamt diff --data`` shows.

By the model's key when it has one (a row whose key is in both versions with other values is *changed*),
else by whole rows counted as a multiset (a duplicate that appears is an added row). The Change Data Feed
would say the same for appends and merges, but a full rebuild is one delete and one insert of every row
there: comparing the two snapshots says what really differs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..storage.store import Loc, open_delta

SAMPLE = 5


@dataclass(frozen=True)
class RowDiff:
    model: str
    from_version: int
    to_version: int
    key: tuple[str, ...]  # empty: compared by whole row
    rows_before: int
    rows_after: int
    added: int
    removed: int
    changed: int  # by key only
    samples: dict[str, list[Any]] = field(default_factory=dict)  # added/removed rows; changed: [before, after]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "from": self.from_version, "to": self.to_version, "key": list(self.key),
                "rows_before": self.rows_before, "rows_after": self.rows_after, "added": self.added,
                "removed": self.removed, "changed": self.changed, "samples": self.samples, "note": self.note}


class VersionUnavailable(ValueError):
    """A version the table's log does not have (or no longer has: vacuumed, expired)."""


def _rows(path: Loc, version: int) -> list[dict[str, Any]]:
    from deltalake.exceptions import DeltaError

    try:
        table = open_delta(path, version)
    except (DeltaError, OSError, ValueError) as exc:  # delta-rs' refusal of a version it has not: one line
        raise VersionUnavailable(f"version {version} cannot be read ({type(exc).__name__}: {exc}); "
                                 "`streamt status --history MODEL` lists the versions") from None
    return [json.loads(json.dumps(r, sort_keys=True, default=str)) for r in table.to_pyarrow_table().to_pylist()]


def _line(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)


def row_diff(model: str, path: Loc, from_version: int, to_version: int | None, key: Sequence[str] = ()) -> RowDiff:
    """What differs between ``from_version`` and ``to_version`` (default: the current one) of the table."""
    newest = int(open_delta(path).version())
    to_version = newest if to_version is None else to_version
    for version in (from_version, to_version):
        if version > newest:
            raise VersionUnavailable(f"version {version} does not exist: the newest is {newest} "
                                     "(`streamt status --history MODEL` lists the versions)")
    before, after = _rows(path, from_version), _rows(path, to_version)
    key = tuple(key)
    missing = [k for k in key if any(k not in r for r in (*before[:1], *after[:1]))]
    note = ""
    if key and not missing:
        old = {tuple(r[k] for k in key): r for r in before}
        new = {tuple(r[k] for k in key): r for r in after}
        if len(old) == len(before) and len(new) == len(after):
            added = sorted((k for k in new if k not in old), key=str)
            removed = sorted((k for k in old if k not in new), key=str)
            changed = sorted((k for k in new if k in old and new[k] != old[k]), key=str)
            return RowDiff(model, from_version, to_version, key, len(before), len(after), len(added), len(removed),
                           len(changed), {"added": [new[k] for k in added[:SAMPLE]],
                                          "removed": [old[k] for k in removed[:SAMPLE]],
                                          "changed": [[old[k], new[k]] for k in changed[:SAMPLE]]})
        note = f"key ({', '.join(key)}) is not unique in these versions: compared by whole row"
    elif missing:
        note = f"key column(s) {', '.join(missing)} not in the table: compared by whole row"
    was, now = Counter(map(_line, before)), Counter(map(_line, after))
    plus, minus = now - was, was - now
    return RowDiff(model, from_version, to_version, (), len(before), len(after), sum(plus.values()),
                   sum(minus.values()), 0, {"added": [json.loads(r) for r in sorted(plus.elements())[:SAMPLE]],
                                            "removed": [json.loads(r) for r in sorted(minus.elements())[:SAMPLE]],
                                            "changed": []}, note)
