"""File exports that a reader always sees whole: old or new, never half-written, empty or doubled.

Every write (a snapshot run, or one micro-batch of a stream) builds a complete new version in a hidden
folder next to the target, then swaps the target path - a relative symlink - to it with one
``rename(2)``, the only atomic publish a local filesystem offers for a whole folder::

    out/orders -> .orders.streamt/v=<utc>-<id>[-q<query>-b<batch>]    the export readers open
    out/.orders.streamt/                                              current + previous version

The warehouse uses a ``_CURRENT`` file instead (see warehouse.py) because only our own code reads it;
a file export is read by tools that know nothing but its path, and every tool follows a symlink.
The previous version is kept until the next publish, so a reader that started on it can finish; a
reader that lists the folder just before a swap and opens a file just after gets "file not found"
(version file names are unique), never another version's rows. A stream's version also names the
checkpoint's query id and the last batch it holds, so a replayed batch is recognised atomically with
the data, and a full refresh (a new query id) starts the export over.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..storage.locks import FileLock
from .version_names import VERSION_PREFIX, stream_mark, version_name


def export_folder(given: Path) -> Path:
    """The export path a sink's ``path:`` names (absolute): its folder resolved, not itself (a file
    export is a symlink to its current version)."""
    return given.parent.resolve() / given.name


def versions_dir(path: Path) -> Path:
    return path.parent / f".{path.name}.streamt"


@dataclass(frozen=True)
class Version:
    path: Path
    query: str | None  # the first 8 hex digits of the streaming query id that wrote it
    batch: int | None  # the last micro-batch it holds


def _version(path: Path) -> Version:
    mark = stream_mark(path.name)
    return Version(path, mark[0] if mark else None, mark[1] if mark else None)


class FileExport:
    """The versions behind one export path; :meth:`publish` is the only writer."""

    def __init__(self, path: Path, model: str) -> None:
        self.path = path
        self.model = model
        self.versions = versions_dir(path)

    def current(self) -> Version | None:
        """The version readers see now (None before the first publish)."""
        if not self.path.is_symlink():
            return None
        target = (self.path.parent / os.readlink(self.path)).resolve()
        return _version(target) if target.is_dir() else None

    def publish(self, build: Callable[[Path, Version | None], None], query: str | None = None,
                batch: int | None = None) -> Path:
        """``build(new_folder, current)`` writes a complete version; then it becomes the export.

        One publisher at a time per export (a lock next to the versions), so concurrent runs publish
        one after the other and the second builds on the first one's result.
        """
        self.versions.mkdir(parents=True, exist_ok=True)
        with FileLock(self.versions / ".lock", wait=True, model=self.model):
            self._adopt_plain_folder()
            current = self.current()
            new = self.versions / version_name(query, batch)
            try:
                build(new, current)
                new.mkdir(parents=True, exist_ok=True)  # an empty result is an empty export, not none
                for crc in new.glob(".*.crc"):  # checksums of renamed parts would not match their names
                    crc.unlink()
                self._swap(new)
            except BaseException:
                shutil.rmtree(new, ignore_errors=True)
                raise
            keep = {new.name} | ({current.path.name} if current is not None else set())
            for old in self.versions.glob(f"{VERSION_PREFIX}*"):
                if old.name not in keep:
                    shutil.rmtree(old, ignore_errors=True)
        return new

    def _swap(self, new: Path) -> None:
        link = self.path.parent / f".{self.path.name}.link-{uuid.uuid4().hex[:8]}"
        os.symlink(os.path.join(self.versions.name, new.name), link)
        try:
            os.replace(link, self.path)  # rename(2): readers see the old link or the new one
        except BaseException:
            link.unlink(missing_ok=True)
            raise
        for stale in self.path.parent.glob(f".{self.path.name}.link-*"):  # left by a crash mid-swap
            stale.unlink(missing_ok=True)

    def _adopt_plain_folder(self) -> None:
        """An export written before versions existed (a plain folder) becomes the first version.
        This one-time move leaves the path missing for an instant; every later swap is atomic."""
        if self.path.is_symlink() or not self.path.exists():
            return
        if not self.path.is_dir():
            raise NotADirectoryError(f"sink {self.model}: {self.path} is a file; a file sink writes a folder there "
                                     "(move the file away or change `sink.path`)")
        legacy = self.versions / f"{VERSION_PREFIX}00000000T000000-adopted"
        shutil.rmtree(self.path / "_staging", ignore_errors=True)  # the old streaming sink's scratch space
        os.replace(self.path, legacy)
        self._swap(legacy)


def link_files(source: Path | None, dest: Path, skip: Callable[[str], bool] = lambda _: False) -> int:
    """Hard-link the data files of ``source`` into ``dest`` (no copy): a new version that keeps the
    rows of the current one. Hidden and ``_`` files (markers, checksums) stay behind."""
    if source is None:
        return 0
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    for f in sorted(source.iterdir()):
        if f.is_file() and not f.name.startswith(("_", ".")) and not skip(f.name) and not (dest / f.name).exists():
            os.link(f, dest / f.name)
            n += 1
    return n


def rename_parts(folder: Path, prefix: str) -> None:
    """Name Spark's part files ``<prefix><n><ext>`` (e.g. one micro-batch's files) so that a replay of
    the same batch can find and replace exactly them."""
    for i, part in enumerate(sorted(folder.glob("part-*"))):
        ext = part.name[part.name.index("."):] if "." in part.name else ""
        os.replace(part, folder / f"{prefix}{i:05d}{ext}")
