"""A Delta table's recent versions, read from its log with delta-rs: no JVM, so ``streamt status
--history`` answers in a fraction of a second and ``streamt restore`` checks its target before Spark starts.

Rows added and removed come from each commit's ``operationMetrics`` where it has them (Spark's and
delta-rs's names differ), else from the statistics of the files the commit added and removed; the table's
rows at each version from its files' statistics, whatever the operation (an overwrite, a RESTORE).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from deltalake.exceptions import DeltaError

from ..storage.store import Loc, open_delta
from .refresh_record import record_from_json

LOG = "_delta_log"
# rows a commit wrote, by engine and operation (the first present wins; else the rows of the files it added)
ADDED = ("numOutputRows", "num_added_rows", "numTargetRowsInserted", "numCopiedRows", "numUpdatedRows")
REMOVED = ("numDeletedRows", "num_deleted_rows", "numTargetRowsDeleted")


class HistoryUnavailable(ValueError):
    """The folder holds no Delta table delta-rs can read; the message says why."""


@dataclass(frozen=True)
class Version:
    version: int
    timestamp: str  # UTC, ISO 8601 to the millisecond
    operation: str  # WRITE, MERGE, RESTORE, STREAMING UPDATE ... (with the write mode: WRITE (Overwrite))
    rows_added: int | None
    rows_removed: int | None
    table_rows: int | None  # rows of the table at this version (its files' statistics)
    note: str | None  # what our refresh record says the version was built from, or other userMetadata
    restored_from: int | None = None  # a RESTORE's target version

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _add_actions(path: Loc, version: int | None) -> dict[str, int | None]:
    """The data files (relative to the table, as the log names them) of ``version`` (default: now)
    with their rows (None for a file without statistics)."""
    actions = open_delta(path, version).get_add_actions(flatten=True)
    paths = actions.column("path").to_pylist()
    counts = actions.column("num_records").to_pylist() if "num_records" in actions.schema.names else [None] * len(paths)
    return {str(p): (None if n is None else int(n)) for p, n in zip(paths, counts, strict=True)}


def table_rows(path: Loc, version: int | None = None) -> int | None:
    """Rows of the table at ``version`` (default: now) from its files' statistics; None when a file has none."""
    counts = list(_add_actions(path, version).values())
    return None if None in counts else sum(n for n in counts if n is not None)


def data_files(path: Loc, version: int) -> list[str]:
    """The data files (relative to the table) that make up ``version``."""
    return list(_add_actions(path, version))


def commits(path: Loc, limit: int | None = None) -> list[dict[str, Any]]:
    """The commit infos the log still holds, newest first (at most ``limit``)."""
    try:
        history = open_delta(path).history(limit)
    except (DeltaError, OSError) as exc:  # no log, a log mid-write, or a protocol delta-rs does not read
        raise HistoryUnavailable(f"{path} is not a Delta table delta-rs can read ({exc})") from None
    return sorted(history, key=lambda h: -int(h["version"]))


def _metric(metrics: dict[str, Any], names: tuple[str, ...]) -> int | None:
    for name in names:
        if metrics.get(name) is not None:
            return int(metrics[name])
    return None


def describe_metadata(meta: object) -> str | None:
    """Our refresh record as one phrase (a build, or the n-th incremental refresh since one, and how many
    input files it covers); anyone else's userMetadata as it is."""
    if not isinstance(meta, str) or not meta:
        return None
    record = record_from_json(meta, 0)
    if record is None:
        return meta
    files = sum(len(f) for f in record.inputs.values())
    build = "full build" if record.refreshes == 0 else f"incremental refresh {record.refreshes} since the last build"
    inputs = ", ".join(sorted(record.inputs)) or "no inputs"
    return f"{build} ({record.kind}) over {files} input file(s) of {inputs}"


def _operation(info: dict[str, Any]) -> str:
    op = str(info.get("operation", "?"))
    mode = (info.get("operationParameters") or {}).get("mode")
    return f"{op} ({mode})" if op == "WRITE" and mode else op


def _files_at(path: Loc, version: int) -> dict[str, int | None] | None:
    """The data files of ``version`` with their rows (one snapshot load); None when it cannot be loaded."""
    if version < 0:
        return {}
    try:
        files = _add_actions(path, version)
    except (DeltaError, OSError):  # the log before a checkpoint was cleaned up: that version cannot be loaded
        return None
    return {unquote(p): n for p, n in files.items()}


def _apply(path: Loc, version: int, files: dict[str, int | None]) -> tuple[int | None, int | None]:
    """Apply commit ``version``'s add and remove actions to ``files``; the rows of the files it added and
    removed (None where a file has no statistics). Raises OSError when the commit file is gone."""
    added: int | None = 0
    removed: int | None = 0
    text = (path / LOG / f"{version:020d}.json").read_text(encoding="utf-8")
    for line in text.splitlines():
        action = json.loads(line) if line.strip() else {}
        if "add" in action:
            stats = json.loads(action["add"].get("stats") or "{}")
            n = stats.get("numRecords")
            files[unquote(action["add"]["path"])] = None if n is None else int(n)
            added = None if added is None or n is None else added + int(n)
        elif "remove" in action:
            gone = files.pop(unquote(action["remove"]["path"]), None)
            removed = None if removed is None or gone is None else removed + gone
    return added, removed


def history(path: Loc, limit: int | None = 10) -> list[Version]:
    """The table's last ``limit`` versions (all the log holds: None), newest first. One snapshot load (the
    version before the oldest shown), then each commit's actions applied in order: the rows stay exact and
    the cost does not grow with the table's age."""
    infos = commits(path, limit)
    if not infos:
        return []
    files = _files_at(path, int(infos[-1]["version"]) - 1)
    out = []
    for info in reversed(infos):
        v = int(info["version"])
        metrics = info.get("operationMetrics") or {}
        added, removed, after = _metric(metrics, ADDED), _metric(metrics, REMOVED), None
        if files is not None:
            try:
                file_added, file_removed = _apply(path, v, files)
            except (OSError, ValueError, KeyError):  # a commit file gone or unreadable: rows unknown from here
                files = None
            else:
                added = file_added if added is None else added
                removed = file_removed if removed is None else removed
                after = None if None in files.values() else sum(n for n in files.values() if n is not None)
        stamp = datetime.fromtimestamp(int(info["timestamp"]) / 1000, UTC).isoformat(timespec="milliseconds")
        target = (info.get("operationParameters") or {}).get("version") if info.get("operation") == "RESTORE" else None
        out.append(Version(v, stamp.replace("+00:00", "Z"), _operation(info), added, removed, after,
                           describe_metadata(info.get("userMetadata")), int(target) if target is not None else None))
    return out[::-1]


def history_json(name: str, path: Loc, versions: list[Version]) -> str:
    return json.dumps({"model": name, "table": str(path), "versions": [v.to_dict() for v in versions]},
                      indent=2, sort_keys=True)
