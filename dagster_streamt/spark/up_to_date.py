"""Whether a model is up to date with its inputs, decided in Python: the rerun that starts no JVM.

Spark finds out that nothing changed only after a session start, the first Delta log replays and a
streaming query's start (about 20 s on a laptop). The facts it decides from are cheap without it:
a source's file listing, a Kafka topic's end offsets (the broker), an upstream table's Delta version
(delta-rs). So after a model's successful run, the runner records what the run read (an *input
digest*, taken before the model read anything) and what it left (its own Delta table id and version,
its checkpoint's last committed batch, its file export's version) in
``.streamt/up_to_date/<model>.json``. A later run that computes the same digest from what is there
now, and finds the model's own state as recorded, knows Spark would read nothing new and change
nothing: :func:`unchanged_models` says so before any session starts.

The record is a memo, never a truth about the data: the Delta log and the checkpoint still decide
what Spark does. It only ever skips a run that would change nothing; any doubt gives no digest and
Spark decides as before: an input Python cannot follow (a listing with globs or partitions, a JDBC
table, an object store), a query whose result depends on when it runs (``rand()``,
``current_timestamp()``, ``{{ this }}``), a partitioned model, a table another writer changed, a
removed checkpoint. The digest covers the model's definition (compiled SQL and settings, its
sources' declarations, the runtime's Spark settings, its tests, this package's version), so an edit
anywhere in it reruns the model on Spark.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..compile.compiled import CompiledProject
from ..core.files import atomic_write
from ..core.object_stores import is_object_uri
from ..spec.connectors import sink_target
from ..spec.models import FILE_FORMATS, Test
from ..spec.project import Project
from ..spec.topics import local_dir
from ..sql.incremental import incremental_plan
from .delta.delta_table import Commit, current_commit
from .delta.input_files import Snapshot, listing_digest, python_snapshot
from .sinks.export_files import FileExport, export_folder
from .sinks.object_export import ObjectExport, export_store
from .storage.paths import ProjectPaths, logged_batches
from .storage.store import Loc, ObjectPath, location
from .storage.warehouse import Warehouse

log = logging.getLogger(__name__)
FORMAT = 1  # of the digest: a change here reruns every model once
KAFKA_TIMEOUT = 5.0  # seconds for a broker's end offsets; a broker that does not answer leaves it to Spark

Listing = Callable[[str], "Snapshot | None"]  # a source's file listing now (None: not a set of local files)
Version = Callable[[str], "Commit | None"]  # an upstream model's current Delta commit


def python_listing(project: Project) -> Listing:
    """A source's files as Python lists them (None when only Spark can: globs, partition folders)."""
    return lambda name: python_snapshot(project, project.sources[name])


def engine_key(master: str | None = None, remote: str | None = None, base_conf: Mapping[str, str] | None = None,
               conf: Mapping[str, str] | None = None) -> str:
    """The engine settings a run adds to the project's (the Spark resource's), as one string.

    >>> engine_key()
    '[null, null, {}, {}]'
    """
    return json.dumps([master, remote, dict(base_conf or {}), dict(conf or {})], sort_keys=True)


@dataclass(frozen=True)
class Definitions:
    """What a digest needs of the project besides its inputs' state: the compiled models, and what a
    test reads besides its model (``checks.assertions.relations_read``: tests are not Spark's to parse)."""

    compiled: CompiledProject
    tests: Mapping[str, list[Test]]  # model -> its tests
    test_reads: Callable[[Test], set[tuple[str, str]] | None]
    engine: str = engine_key()  # the run's engine settings beyond the project's (:func:`engine_key`)


@dataclass
class InputState:
    """How a digest reads the inputs: ``listing`` and ``version`` are the run's own (the files and
    versions its models read) in the runner, and what is there now before a run."""

    project: Project
    defs: Definitions
    listing: Listing
    version: Version
    offsets: dict[str, str | None] = field(default_factory=dict)  # per source, shared by a run's digests

    def source(self, name: str) -> str | None:
        """A source's state: its listing digest, or its topics' start and end offsets on the project's
        broker (a batch read reads from the start, which retention moves)."""
        return source_state(self.project, name, self.listing(name), self.offsets)

    def digest(self, name: str) -> str | None:
        """The model's input digest (see the module docstring); None when Python cannot follow an input."""
        project, model = self.project, self.project.models[name]
        compiled = self.defs.compiled.models.get(name)
        reads = reads_of(self.defs, name)
        if compiled is None or model.partitioned_by is not None or reads is None:
            return None
        sql = compiled.spark_sql or compiled.sql
        if sql is not None and incremental_plan(sql, [*compiled.refs, *compiled.sources], itself=name).kind \
                == "volatile":
            return None
        parts: dict[str, Any] = {
            "format": FORMAT, "package": __version__, "code": [compiled.sql_hash, compiled.config_hash],
            "runtime": project.runtime.spark.model_dump(mode="json"), "engine": self.defs.engine,
            "zone": [os.environ.get("TZ"), time.tzname],  # a session's default time zone
            "tests": [t.model_dump(mode="json") for t in self.defs.tests.get(name, [])]}
        for kind, other in sorted(reads):
            state = self._state(kind, other)
            if state is None:
                return None
            parts[f"{kind}:{other}"] = state
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def _state(self, kind: str, name: str) -> Any:
        if kind == "source":
            state = self.source(name)
            return None if state is None else [self.project.sources[name].model_dump(mode="json"), state]
        upstream = self.project.models[name]
        if upstream.materialized == "view":  # stores nothing: what it reads is what counts
            return self.digest(name)
        if upstream.partitioned_by is not None or upstream.materialized == "sink":
            return None
        return _version_of(self.version(name))


def source_state(project: Project, name: str, snapshot: Snapshot | None,
                 offsets: dict[str, str | None] | None = None) -> str | None:
    """A source's state without Spark: the digest of its file listing (``snapshot``), else its topics'
    start and end offsets on the project's broker (kept in ``offsets``, one broker call per source);
    None when only Spark can tell."""
    if snapshot is not None:
        return listing_digest(snapshot)
    if project.sources[name].resolved_format != "kafka":
        return None
    cache = {} if offsets is None else offsets
    if name not in cache:
        cache[name] = _offsets(project, name)
    return cache[name]


def reads_of(defs: Definitions, name: str) -> set[tuple[str, str]] | None:
    """What a model's rows and its tests' verdicts depend on besides its own table: its sources and
    upstream models, and what its tests compare it with; None when a test may read anything."""
    model = defs.compiled.models.get(name)
    if model is None:
        return None
    out = {("source", s) for s in model.sources} | {("model", m) for m in model.upstream_models}
    for test in defs.tests.get(name, []):
        reads = defs.test_reads(test)
        if reads is None:
            return None
        out |= reads
    return out


OWN_BROKER = ("kafka.", "assign", "subscribepattern")  # source options that read elsewhere than the topics named


def _offsets(project: Project, source: str) -> str | None:
    from ..kafka.admin import KafkaAdminError, end_offsets, start_offsets
    from ..kafka.lag import broker_settings, source_topics

    broker = broker_settings(project)
    spec = project.sources[source]
    topics = source_topics(spec)
    if broker is None or not topics or any(k.lower().startswith(OWN_BROKER) for k in spec.options):
        return None
    try:
        ends = {t: [sorted(start_offsets(broker[0], t, conf=broker[1], timeout=KAFKA_TIMEOUT).items()),
                    sorted(end_offsets(broker[0], t, conf=broker[1], timeout=KAFKA_TIMEOUT).items())]
                for t in sorted(topics)}
    except KafkaAdminError as exc:
        log.info("source %s: offsets unknown (%s); Spark decides whether it has new records", source, exc)
        return None
    return json.dumps(ends)


def own_state(project: Project, paths: ProjectPaths, warehouse: Warehouse, name: str) -> dict[str, Any] | None:
    """What a run of the model leaves: its Delta table's id and version, its checkpoint's last
    committed batch, its export's current version (a file export) or table version (a Delta sink).
    (an object store's: its manifest's files). None for a sink that republishes its whole snapshot each
    run to a target Python cannot see (JDBC, Kafka): each run repairs what anyone did to it, so it
    always goes to Spark."""
    model = project.models[name]
    out: dict[str, Any] = {"checkpoint": _last_batch(paths.checkpoint(name))}
    if (model.materialized or "table") in ("table", "stream"):
        out["table"] = _version_of(current_commit(warehouse.data_dir(name)))
    sink = model.sink_config if model.materialized == "sink" else None
    if sink is not None:
        target = sink_target(sink, name, local_dir(project))
        if target.path and is_object_uri(target.path) and target.format in FILE_FORMATS:
            store = export_store(project.runtime.spark.conf, target.options)
            found = ObjectExport(ObjectPath(target.path, store), name).current()
            out["export"] = hashlib.sha256("\n".join(found.files).encode()).hexdigest() if found else None
        elif target.path and target.format in FILE_FORMATS:
            current = FileExport(export_folder(project.resolve_path(target.path)), name).current()
            out["export"] = current.path.name if current is not None else None
        elif target.path and target.format == "delta":
            out["export"] = _version_of(current_commit(location(target.path, project.resolve_path,
                                                                project.runtime.spark.conf)))
        elif out["checkpoint"] is None:  # not a stream (whose rerun with nothing new writes nothing)
            return None
    return out


def _version_of(commit: Commit | None) -> str | None:
    return None if commit is None else f"{commit.table_id}@{commit.version}"


def _last_batch(checkpoint: Loc) -> int | None:
    return max(logged_batches(checkpoint / "commits"), default=None)


@dataclass(frozen=True)
class Record:
    """What the last successful run of a model read (``digest``) and left (``own``)."""

    digest: str
    own: dict[str, Any]
    run_id: str
    at: float  # when it was written: a data test's result from before it is not this data's


def _path(paths: ProjectPaths, name: str) -> Path:
    return paths.state_dir / "up_to_date" / f"{name}.json"


def read_record(paths: ProjectPaths, name: str) -> Record | None:
    try:
        data = json.loads(_path(paths, name).read_text())
        return Record(str(data["digest"]), dict(data["own"]), str(data["run_id"]), float(data["at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_record(paths: ProjectPaths, name: str, digest: str, own: dict[str, Any], run_id: str) -> None:
    """Record that a successful run of ``name`` read ``digest`` and left ``own``."""
    path = _path(paths, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({"digest": digest, "own": own, "run_id": run_id, "at": time.time()},
                                  sort_keys=True))


def unchanged_models(project: Project, defs: Definitions, names: Iterable[str],
                     full_refresh: Iterable[str] = (),
                     also: Callable[[str, Record], bool] = lambda name, record: True) -> dict[str, Record]:
    """Of ``names`` (in run order), the models a run would leave as they are, each with its record:
    its digest and own state match those its last successful run recorded, ``also`` agrees, and every
    upstream model in ``names`` is unchanged too. No Spark: file listings, delta-rs and the broker only."""
    paths = ProjectPaths.from_project(project)
    warehouse = Warehouse(paths.warehouse, paths.locks)
    state = InputState(project, defs, python_listing(project),
                       lambda up: current_commit(warehouse.data_dir(up)))
    names = list(names)
    refresh = set(full_refresh)
    out: dict[str, Record] = {}
    for name in names:
        model = project.models[name]
        if name in refresh or not model.enabled:
            continue
        reads = reads_of(defs, name)
        if reads is None or any(kind == "model" and up in names and up not in out for kind, up in reads):
            continue
        record = read_record(paths, name)
        try:
            same = record is not None and state.digest(name) == record.digest and \
                own_state(project, paths, warehouse, name) == record.own
        except Exception:  # an input Python cannot read: Spark decides, and reports any problem
            log.debug("model %s: up-to-date check failed", name, exc_info=True)
            continue
        if record is not None and same and also(name, record):
            out[name] = record
    return out
