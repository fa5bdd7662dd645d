"""The files an input consists of right now, so a table knows which of them it has already read.

A *snapshot* maps each data file of an input to its :func:`fingerprint`. Sources
are keyed by absolute path; a stored table by its data files' paths inside the Delta table, which
an append keeps (Delta never rewrites a data file: see :func:`.delta_table.snapshot`). Comparing
the snapshot a table recorded with today's tells what happened since: nothing, files appended, or
something rewritten (a file changed or gone), which only a full recompute can follow.

Readers are pinned to the snapshot's files, so a file that lands while a model runs is neither read
nor recorded: it is new data for the next run, never read twice or skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from ...spec.models import FILE_FORMATS, Source
from ...spec.project import Project
from ...spec.topics import topic_folder
from ..storage.store import Loc

Fingerprint = tuple[int, int, int, int]  # (size in bytes, modification time ns, inode, status change time ns)
_GLOB = set("*?[]{}\\")


def fingerprint(st: os.stat_result) -> Fingerprint:
    """What tells a file from a rewrite of it, for every record of files read (refresh records,
    snapshots). Size and modification time alone miss a rewrite of the same size whose mtime is set
    back (``os.utime``); the status change time cannot be set back, and a new file renamed into place
    has a new inode. A file merely touched or renamed then looks rewritten: read again in full, never
    twice."""
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns


def read_fingerprint(value: Sequence[object]) -> Fingerprint:
    """A fingerprint as stored (a JSON list); ValueError for any other shape (an older record)."""
    size, mtime, inode, ctime = (int(v) for v in value)  # type: ignore[call-overload]
    return size, mtime, inode, ctime


def listed_by_spark(uris: Sequence[str]) -> dict[str, Fingerprint] | None:
    """Local path -> fingerprint of the files a Spark reader lists (``DataFrame.inputFiles()``, URL-encoded
    URIs). None unless every file is local and its path can be handed back to a reader as it is
    (no glob characters, which a reader would expand)."""
    out: dict[str, Fingerprint] = {}
    for uri in uris:
        parsed = urlparse(uri)
        path = unquote(parsed.path)
        if parsed.scheme not in ("", "file") or _GLOB & set(path):
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        out[path] = fingerprint(st)
    return out

# options that change which files a reader lists: Spark itself lists such sources
_LISTING_OPTIONS = frozenset({"pathglobfilter", "recursivefilelookup", "modifiedbefore", "modifiedafter", "basepath"})


@dataclass(frozen=True)
class Snapshot:
    root: Loc  # the folder keys are relative to (sources: absolute keys, root is the source location)
    files: Mapping[str, Fingerprint]
    relative: bool  # keys relative to root (stored tables) or absolute paths (sources)

    def paths(self, keys: list[str] | None = None) -> list[str]:
        """Absolute paths of ``keys`` (default: every file), sorted."""
        chosen = sorted(self.files if keys is None else keys)
        return [str(self.root / k) if self.relative else k for k in chosen]


def python_snapshot(project: Project, source: Source) -> Snapshot | None:
    """The files of a local file source (or local topic folder) now, as Python lists them; None for
    other sources, a missing folder, or a listing only Spark can make (globs, partition folders)."""
    location = source_location(project, source)
    if location is None or not location.exists():
        return None
    files = listed_by_python(location, source.options)
    return Snapshot(location, files, relative=False) if files is not None else None


def listing_digest(snapshot: Snapshot | None) -> str | None:
    """A digest of a file source's listing (every file's path and fingerprint); None without one."""
    if snapshot is None:
        return None
    text = json.dumps(sorted((path, list(fp)) for path, fp in snapshot.files.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def appended(before: Mapping[str, Fingerprint], now: Snapshot) -> list[str] | None:
    """Keys of the files added since ``before``; None when a file of ``before`` changed or is gone."""
    if any(now.files.get(key) != tuple(fp) for key, fp in before.items()):
        return None
    return sorted(key for key in now.files if key not in before)


def hidden(name: str) -> bool:
    """Names Spark's file listing skips (InMemoryFileIndex: ``_x`` unless a ``k=v`` folder, ``.x``)."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")


def source_location(project: Project, source: Source) -> Path | None:
    """The local file or folder a file source (or a local topic folder) reads; None for others."""
    fmt = source.resolved_format
    if fmt == "kafka" and source.topic:
        return topic_folder(project, source.topic)
    if fmt in FILE_FORMATS and source.path:
        path = project.resolve_path(source.path)
        return path if "://" not in str(source.path) else None
    return None


def listed_by_python(location: Path, options: Mapping[str, str]) -> dict[str, Fingerprint] | None:
    """The files of a plain folder (no subfolders, no listing options) or of a single file, keyed by
    absolute path; None when only Spark can say (partition folders, globs, listing options)."""
    if any(k.lower() in _LISTING_OPTIONS for k in options) or any(c in str(location) for c in "*?[]{}"):
        return None
    try:
        if location.is_file():
            return {str(location): fingerprint(location.stat())}
        out: dict[str, Fingerprint] = {}
        with os.scandir(location) as entries:
            for entry in entries:
                if hidden(entry.name):
                    continue
                if entry.is_dir():
                    return None
                out[os.path.abspath(entry.path)] = fingerprint(entry.stat())
        return out
    except OSError:
        return None
