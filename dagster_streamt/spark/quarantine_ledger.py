"""Which files of a batch source the quarantine pass has already read, and what it counted there.

A table model rereads its whole source on every run, but the quarantine pass (every record parsed to
find the malformed ones) only needs the files it has not seen: a rerun after one new file parses one
file, a rerun without new data parses none. The counts the run reports stay totals over every file.

The ledger is a list of passes, each with the files it read (path and :func:`fingerprint`) and the
rows and corrupt rows it counted. A pass counts only while every file it read is unchanged; a file
that changed or vanished drops the whole ledger and the next pass reads everything again. It is
written after the pass's quarantine rows are appended, so a crash in between only repeats the pass
(whose rows the quarantine already holds: appends skip files quarantined before).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..core.files import atomic_write

VERSION = 2  # 2: four-part fingerprints (a ledger of size + mtime ones is read again from scratch)
LEDGER_FILE = "_streamt_ledger.json"  # inside the quarantine's folder: Spark skips `_` files, and
# deleting the quarantine deletes the ledger with it
Fingerprint = tuple[int, int, int, int]  # (size in bytes, modification time ns, inode, status change time ns)


def fingerprint(st: os.stat_result, *, linked: bool = False) -> Fingerprint:
    """What tells a file from a rewrite of it, for every record of files read (refresh records, this
    ledger, the parsed cache). Size and modification time alone miss a rewrite of the same size whose
    mtime is set back (``os.utime``); the status change time cannot be set back, and a new file
    renamed into place has a new inode. A file merely touched or renamed then looks rewritten: read
    again in full, never twice. ``linked``: the warehouse's own files, never rewritten, shared by
    table versions as hard links (a new link changes the status change time, not the bytes): the
    inode identifies them."""
    return st.st_size, st.st_mtime_ns, st.st_ino, 0 if linked else st.st_ctime_ns


def read_fingerprint(value: Sequence[object]) -> Fingerprint:
    """A fingerprint as stored (a JSON list); ValueError for any other shape (an older record)."""
    size, mtime, inode, ctime = (int(v) for v in value)  # type: ignore[call-overload]
    return size, mtime, inode, ctime


@dataclass(frozen=True)
class Pass:
    files: Mapping[str, Fingerprint]
    rows: int
    bad: int


GLOB = set("*?[]{}\\")


def local_files(uris: Sequence[str]) -> dict[str, Fingerprint] | None:
    """Local path -> fingerprint of the files a read covers (``DataFrame.inputFiles()``, URL-encoded
    URIs). None unless every file is local and its path can be handed back to a reader as it is
    (no glob characters, which a reader would expand)."""
    out: dict[str, Fingerprint] = {}
    for uri in uris:
        parsed = urlparse(uri)
        path = unquote(parsed.path)
        if parsed.scheme not in ("", "file") or GLOB & set(path):
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        out[path] = fingerprint(st)
    return out


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[Pass]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return []
        try:
            return [Pass({f: read_fingerprint(fp) for f, fp in p["files"].items()}, int(p["rows"]), int(p["bad"]))
                    for p in data.get("passes", [])]
        except (ValueError, TypeError, KeyError, AttributeError):
            return []

    def plan(self, current: Mapping[str, Fingerprint]) -> tuple[list[Pass], list[str]]:
        """(earlier passes still valid, files to read now). Any earlier file changed or gone: none valid."""
        passes = self.load()
        if any(current.get(f) != fp for p in passes for f, fp in p.files.items()):
            passes = []
        seen = {f for p in passes for f in p.files}
        return passes, sorted(f for f in current if f not in seen)

    def save(self, passes: Sequence[Pass]) -> None:
        data = {"version": VERSION, "passes": [{"files": {f: list(fp) for f, fp in sorted(p.files.items())},
                                                "rows": p.rows, "bad": p.bad} for p in passes]}
        atomic_write(self.path, json.dumps(data, sort_keys=True))
