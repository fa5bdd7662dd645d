"""The project's own table layout and registry (no Hive metastore, so many processes can share it).

Layout under ``runtime.spark.warehouse``::

    <model>/data/                a Delta table (:mod:`.delta_table`), written by a table model's refreshes
                                 or a stream model's micro-batches
    <model>/_streamt_state/      an aggregation's state, a Delta table too (:mod:`.table_state`)
    <source>__quarantine/data/   malformed records of a source, appended
    _registry/<model>.json       kind, layout, format, schema; a view's SQL and inputs

One registry file per model keeps concurrent writers of different models from touching one file.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyspark.sql import DataFrameReader, SparkSession
from pyspark.sql.streaming import DataStreamReader
from pyspark.sql.types import StructType

from ...spec.project import Project
from ..errors import ModelRunError
from .locks import FileLock
from .paths import ProjectPaths
from .store import Loc, ObjectPath, remove_tree, write_text

REGISTRY = "_registry"


@dataclass
class RegistryEntry:
    name: str
    kind: str  # table | view | stream | sink
    layout: str  # delta | stream | view | external | partitioned
    format: str = "parquet"
    schema_json: str | None = None
    sql: str | None = None  # a view's SQL, rendered against batch view names
    inputs: list[list[str]] = field(default_factory=list)  # a view's inputs: [kind, name]
    options: dict[str, str] = field(default_factory=dict)  # read options (csv header ...)
    location: str | None = None  # external target of a sink
    partitioning: str | None = None  # a partitioned table's partitions signature (layout "partitioned")
    rows: int | None = None  # rows of the version below, counted while writing it (readers need not count)
    version: str | None = None  # the Delta version ``rows`` belongs to
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


class Warehouse:
    """``root``: a local folder or an object store prefix; ``locks``: where the writer locks of an object
    store's models are (a local folder: default ``<root>/../locks``; local warehouses keep theirs in the
    model's folder)."""

    def __init__(self, root: Loc, locks: Path | None = None) -> None:
        self.root = root
        self.locks = locks

    @classmethod
    def for_project(cls, project: Project) -> Warehouse:
        paths = ProjectPaths.from_project(project)
        return cls(paths.warehouse, paths.locks)

    @property
    def remote(self) -> bool:
        """Whether the tables are on an object store."""
        return isinstance(self.root, ObjectPath)

    # -- layout ------------------------------------------------------------------------------
    def model_dir(self, name: str) -> Loc:
        return self.root / name

    def data_dir(self, name: str) -> Loc:
        """Where a stream model's file sink writes."""
        return self.model_dir(name) / "data"

    def quarantine_dir(self, source: str) -> Loc:
        return self.root / f"{source}__quarantine" / "data"

    def table_location(self, name: str) -> Loc | None:
        """The folder a reader should read now: the model's Delta table (or a view's nothing)."""
        data = self.data_dir(name)
        return data if data.is_dir() else None

    # -- batch tables --------------------------------------------------------------------------
    def lock(self, name: str) -> FileLock:
        """The model's writer lock: one writer plans and commits a new version at a time (Delta's own
        optimistic concurrency still guards writers this lock does not see: other machines)."""
        if isinstance(self.root, ObjectPath):
            if self.locks is None:
                raise ModelRunError(f"model {name}: no local folder for the locks of {self.root}", name)
            return FileLock(self.locks / f"{name}.lock", wait=True, model=name)
        model_dir = self.root / name
        model_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(model_dir / ".lock", wait=True, model=name)

    # -- registry ------------------------------------------------------------------------------
    def _entry_path(self, name: str) -> Loc:
        return self.root / REGISTRY / f"{name}.json"

    def read_entry(self, name: str) -> RegistryEntry | None:
        try:
            data = json.loads(self._entry_path(name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return RegistryEntry(**data)

    def write_entry(self, entry: RegistryEntry) -> None:
        entry.updated_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write_text(self._entry_path(entry.name), json.dumps(asdict(entry), indent=2, sort_keys=True), durable=True)

    def remove(self, name: str) -> None:
        """Forget a model: its registry entry and every stored version or stream output."""
        self._entry_path(name).unlink(missing_ok=True)
        remove_tree(self.model_dir(name))
