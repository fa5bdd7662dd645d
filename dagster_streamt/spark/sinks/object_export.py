"""File exports on an object store: a manifest names the current version's files.

An object store has no rename and no symlink, and no way to make several objects appear at once; the
one atomic step is a single PUT. So an export there is versioned data files, written once, and one
small object that names the files of the current version: Hive's *symlink manifest* (the format of
Delta's ``GENERATE symlink_format_manifest``; Athena, Trino, Presto, Hive and Redshift Spectrum read
it as a table with ``SymlinkTextInputFormat``)::

    s3a://lake/exports/orders/_symlink_format_manifest/manifest   the export readers open: one URI a line
    s3a://lake/exports/orders/_versions/v=<utc>-<id>[-q<query>-b<batch>]/part-...   data, written once

A publish writes the new rows into a version prefix of their own (nothing references it yet, so a
crash there leaves only garbage, removed by the next publish), then replaces the manifest with one PUT:
readers see the old list or the new one, never a mix. An append lists the current files plus the new
ones (no copy); an upsert or a snapshot lists only the new version's. The files of the previous
manifest are kept until the next publish, so a reader that started on it can finish. A stream's
version prefix names the checkpoint's query id and the batch it holds, so the manifest alone says which
batch the export holds (a batch Spark replays is recognised) and a full refresh (a new query id)
starts the export over. ``_``-prefixed folders are hidden from Spark, pyarrow and Hive, so a reader that
opens the folder itself finds no data rather than every version's.

One publisher at a time: the caller holds the sink's checkpoint lock (as for a local export).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...core.object_stores import EXPORT_MANIFEST
from ..storage.store import ObjectPath, StoreOptions
from .version_names import stream_mark, version_name

VERSIONS = "_versions"


def export_store(spark_conf: Mapping[str, str], options: Mapping[str, str]) -> StoreOptions:
    """How Python reaches an export's store: as Spark's writer does, the project's conf and then the sink's
    own ``fs.*`` options (a connector's credentials), which Spark applies to that write only.

    >>> export_store({"spark.hadoop.fs.s3a.endpoint": "http://s3"}, {"fs.s3a.access.key": "k"}).hadoop
    (('fs.s3a.access.key', 'k'), ('fs.s3a.endpoint', 'http://s3'))
    """
    own = {f"spark.hadoop.{k}": v for k, v in options.items() if k.startswith("fs.")}
    return StoreOptions.from_spark_conf({**spark_conf, **own})


@dataclass(frozen=True)
class ObjectVersion:
    """The version a manifest names: its files (URIs), and for a stream the query and last batch."""

    files: tuple[str, ...]
    query: str | None
    batch: int | None

    @property
    def prefixes(self) -> frozenset[str]:
        """The version prefixes (``v=...`` names) its files lie in."""
        return frozenset(_prefix_name(f) for f in self.files)


def _prefix_name(uri: str) -> str:
    return uri.split(f"/{VERSIONS}/", 1)[1].split("/", 1)[0]


def _parse(text: str) -> ObjectVersion:
    files = tuple(line.strip() for line in text.splitlines() if line.strip())
    marks = [m for f in files if (m := stream_mark(_prefix_name(f))) is not None]
    if not marks:
        return ObjectVersion(files, None, None)
    query = marks[-1][0]  # a stream export's files all come from one query (a new one starts over)
    return ObjectVersion(files, query, max(batch for q, batch in marks if q == query))


class ObjectExport:
    """The versions behind one export on an object store; :meth:`publish` is the only writer.

    >>> export = ObjectExport(ObjectPath("s3a://lake/exports/orders"), "orders")
    >>> str(export.manifest)
    's3a://lake/exports/orders/_symlink_format_manifest/manifest'
    """

    def __init__(self, path: ObjectPath, model: str) -> None:
        self.path = path
        self.model = model
        self.manifest = path / EXPORT_MANIFEST
        self.versions = path / VERSIONS

    def current(self) -> ObjectVersion | None:
        """The version readers see now (None before the first publish)."""
        try:
            return _parse(self.manifest.read_text())
        except FileNotFoundError:
            return None

    def publish(self, build: Callable[[ObjectPath, ObjectVersion | None], None], query: str | None = None,
                batch: int | None = None, append: bool = False) -> ObjectPath:
        """``build(new_prefix, current)`` writes the new rows under a prefix of their own; then the manifest
        names them (and with ``append`` the current version's files too). A stream's batch (``query``,
        ``batch``) of another query than the current version's starts the export over."""
        previous = self.current()
        current = previous
        if query is not None and current is not None and current.query != query[:8]:
            current = None
        name = version_name(query, batch)
        new = self.versions / name
        try:
            build(new, current if current is not None and current.files else None)
            written = sorted(f"{new}/{rel}" for rel in new.files(skip=lambda part: part.startswith(("_", "."))))
        except BaseException:
            new.rmtree()
            raise
        files = [*(current.files if append and current is not None else ()), *written]
        self.manifest.write_text("".join(f"{f}\n" for f in files))  # one PUT: the publish
        keep = {name} | {_prefix_name(f) for f in files} | (previous.prefixes if previous else frozenset())
        for old in self.versions.iterdir():
            if old.name not in keep:
                old.rmtree()
        return new
