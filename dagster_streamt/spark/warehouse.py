"""The project's own table layout and registry (no Hive metastore, so many processes can share it).

Layout under ``runtime.spark.warehouse``::

    <model>/data/                a Delta table (the default format: :mod:`.delta_table`), written by a table
                                 model's refreshes or a stream model's micro-batches; with another format, a
                                 stream model's file-sink output (``_spark_metadata`` = exactly-once) or a
                                 partitioned table's ``streamt_partition=<key>/`` folders
    <model>/v=<utc-time>-<id>/   a table version in a plain file format (``advanced.spark.format: parquet``)
    <model>/_CURRENT             names the readable version; swapped atomically with os.replace
    <source>__quarantine/data/   malformed records of a source, appended
    _registry/<model>.json       kind, layout, format, schema; a view's SQL and inputs

One registry file per model keeps concurrent writers of different models from touching one file.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyspark.sql import DataFrameReader, SparkSession
from pyspark.sql.streaming import DataStreamReader
from pyspark.sql.types import StructType

from ..core.files import atomic_write
from ..spec.project import Project
from .errors import ModelRunError
from .input_files import hidden
from .locks import FileLock
from .paths import ProjectPaths

POINTER = "_CURRENT"
VERSION_PREFIX = "v="
REGISTRY = "_registry"


@dataclass
class RegistryEntry:
    name: str
    kind: str  # table | view | stream | sink
    layout: str  # delta | versioned | stream | view | external | partitioned
    format: str = "parquet"
    schema_json: str | None = None
    sql: str | None = None  # a view's SQL, rendered against batch view names
    inputs: list[list[str]] = field(default_factory=list)  # a view's inputs: [kind, name]
    options: dict[str, str] = field(default_factory=dict)  # read options (csv header ...)
    location: str | None = None  # external target of a sink
    partitioning: str | None = None  # a partitioned table's partitions signature (layout "partitioned")
    rows: int | None = None  # rows of the version below, counted while writing it (readers need not count)
    version: str | None = None  # the table version (folder name, or Delta version) ``rows`` belongs to
    updated_at: str = ""

    def schema(self) -> StructType | None:
        return StructType.fromJson(json.loads(self.schema_json)) if self.schema_json else None

    def read(self, spark: SparkSession) -> DataFrameReader:
        """A batch reader of the stored rows with their format, options and schema (Delta keeps its own
        schema in its log and refuses a given one)."""
        reader = spark.read.format(self.format).options(**self.options)
        schema = self.schema()
        return reader if self.format == "delta" or schema is None else reader.schema(schema)

    def read_stream(self, spark: SparkSession) -> DataStreamReader:
        """A streaming reader of the stored rows (see :meth:`read`)."""
        reader = spark.readStream.format(self.format).options(**self.options)
        return reader if self.format == "delta" else reader.schema(self.stored_schema())

    def stored_schema(self) -> StructType:
        """The schema rows were written with; a registry entry without one predates this version."""
        schema = self.schema()
        if schema is None:
            raise ModelRunError(f"model {self.name}: the warehouse records no schema for it; "
                                f"rebuild it with `streamt run --full-refresh -s {self.name}`")
        return schema


def link_data_files(source: Path, target: Path) -> int:
    """Hard-link every data file of ``source`` (partition folders included; ``_``/``.`` files are not
    data) into ``target``: same names, sizes and times, no bytes copied. A filesystem without hard
    links gets copies. Returns the number of files."""
    count = 0
    for folder, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if not hidden(d)]
        rel = Path(folder).relative_to(source)
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            if hidden(name):
                continue
            src, dst = Path(folder) / name, target / rel / name
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
            count += 1
    return count


class Warehouse:
    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def for_project(cls, project: Project) -> Warehouse:
        return cls(ProjectPaths.from_project(project).warehouse)

    # -- layout ------------------------------------------------------------------------------
    def model_dir(self, name: str) -> Path:
        return self.root / name

    def data_dir(self, name: str) -> Path:
        """Where a stream model's file sink writes."""
        return self.model_dir(name) / "data"

    def quarantine_dir(self, source: str) -> Path:
        return self.root / f"{source}__quarantine" / "data"

    def current_version(self, name: str) -> Path | None:
        pointer = self.model_dir(name) / POINTER
        try:
            version = pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        path = self.model_dir(name) / version
        return path if version and path.is_dir() else None

    def table_location(self, name: str) -> Path | None:
        """The folder a reader should read now: the current table version or the stream output."""
        version = self.current_version(name)
        if version is not None:
            return version
        data = self.data_dir(name)
        return data if data.is_dir() else None

    # -- batch tables --------------------------------------------------------------------------
    def lock(self, name: str) -> FileLock:
        """The model's writer lock: one writer plans and writes a new version at a time."""
        model_dir = self.model_dir(name)
        model_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(model_dir / ".lock", wait=True, model=name)

    def write_version(self, name: str, write: Callable[[str], None], *, locked: bool = False,
                      base: Path | None = None) -> Path:
        """Write a new version with ``write(path)``, swap ``_CURRENT`` to it, delete older versions.

        Readers never see a half-written table; the lock (taken here unless the caller holds it:
        ``locked``) keeps two writers from deleting each other's version in progress. ``base``: the
        new version starts with hard links to that version's data files (an append adds to them).
        """
        if not locked:
            with self.lock(name):
                return self.write_version(name, write, locked=True, base=base)
        model_dir = self.model_dir(name)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        version = f"{VERSION_PREFIX}{stamp}-{uuid.uuid4().hex[:8]}"
        target = model_dir / version
        try:
            if base is not None:
                link_data_files(base, target)
            write(str(target))
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        atomic_write(model_dir / POINTER, version + "\n", durable=True)
        for old in model_dir.glob(f"{VERSION_PREFIX}*"):
            if old.name != version:
                shutil.rmtree(old, ignore_errors=True)
        return target

    def drop_versions(self, name: str) -> None:
        """Remove the file-format versions of a table now stored in another layout (the caller holds its
        lock): readers look for ``_CURRENT`` first."""
        model_dir = self.model_dir(name)
        (model_dir / POINTER).unlink(missing_ok=True)
        for old in model_dir.glob(f"{VERSION_PREFIX}*"):
            shutil.rmtree(old, ignore_errors=True)

    # -- registry ------------------------------------------------------------------------------
    def _entry_path(self, name: str) -> Path:
        return self.root / REGISTRY / f"{name}.json"

    def read_entry(self, name: str) -> RegistryEntry | None:
        try:
            data = json.loads(self._entry_path(name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return RegistryEntry(**data)

    def write_entry(self, entry: RegistryEntry) -> None:
        entry.updated_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        atomic_write(self._entry_path(entry.name), json.dumps(asdict(entry), indent=2, sort_keys=True), durable=True)

    def remove(self, name: str) -> None:
        """Forget a model: its registry entry and every stored version or stream output."""
        self._entry_path(name).unlink(missing_ok=True)
        shutil.rmtree(self.model_dir(name), ignore_errors=True)
