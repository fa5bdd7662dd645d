"""How much new data a run's models read, told from Python before any JVM starts: it decides the
compilers of the run's local driver (:mod:`.session.jit`, where the measurements are)."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..compile.compiled import CompiledProject
from ..spec.project import Project
from .delta.delta_table import current_commit
from .delta.input_files import Snapshot, appended, python_snapshot
from .delta.refresh_record import input_key
from .session.jit import Jit
from .storage.paths import ProjectPaths
from .storage.store import Loc
from .storage.warehouse import Warehouse

log = logging.getLogger(__name__)

# the new data up to which C1 alone is faster: measured on 2 cores, a first run over 600,000 orders (68 MB of
# JSON) took 0.83x with it, over 2 M orders (227 MB) 1.23x (benchmarks/bench_jit.py --modes quick,full); more
# cores leave C2 a core of its own, so the bound stays below the crossing
QUICK_BYTES = 64 * 2**20
_INCREMENTAL = ("append", "aggregate")  # refresh kinds that read only what their inputs appended


def choose_jit(project: Project, compiled: CompiledProject, names: Iterable[str],
               full_refresh: Collection[str] = ()) -> Jit:
    """``quick`` when running ``names`` reads at most :data:`QUICK_BYTES` of new data as far as Python
    can tell, else ``full``; the project's ``runtime.spark.jit`` when it is not ``auto``."""
    chosen: Jit = project.runtime.spark.jit
    if chosen != "auto":
        return chosen
    try:
        size = new_input_bytes(project, compiled, names, full_refresh)
    except Exception:  # an input Python cannot read: the JVM's default, Spark reports any problem
        log.debug("new input size unknown", exc_info=True)
        size = None
    return "quick" if size is not None and size <= QUICK_BYTES else "full"


def new_input_bytes(project: Project, compiled: CompiledProject, names: Iterable[str],
                    full_refresh: Collection[str] = ()) -> int | None:
    """The bytes of the files the models ``names`` read anew (what counts: :mod:`.session.jit`); None when a
    source is not a set of local files Python lists (a Kafka broker, an object store, globs)."""
    paths = ProjectPaths.from_project(project)
    warehouse = Warehouse(paths.warehouse, paths.locks)
    listings: dict[str, Snapshot | None] = {}

    def listing(source: str) -> Snapshot | None:
        if source not in listings:
            listings[source] = python_snapshot(project, project.sources[source])
        return listings[source]

    total = 0
    for name in names:
        sources, tables = _inputs(compiled, name)
        snapshots = {source: listing(source) for source in sorted(sources)}
        if any(snapshot is None for snapshot in snapshots.values()):
            return None
        known = {k: v for k, v in snapshots.items() if v is not None}
        read = _files_read(project, paths, warehouse, name, known) if name not in full_refresh else None
        if read is None:  # the model reads its inputs in full: its upstream tables as they are now too
            read = {}
            for table in sorted(tables):
                commit = current_commit(warehouse.data_dir(table))
                total += sum(int(size) for size in commit.files.values()) if commit is not None else 0
        for source, snapshot in known.items():
            seen = read.get(source) or ()
            total += sum(fp[0] for path, fp in snapshot.files.items() if path not in seen)
    return total


def _files_read(project: Project, paths: ProjectPaths, warehouse: Warehouse, name: str,
                sources: Mapping[str, Snapshot]) -> Mapping[str, Collection[str]] | None:
    """Per source (of ``sources``: their listings now), the files a model has read already, when it reads
    only new ones: a stream's from its checkpoint's file-source log, an incremental table's from its
    refresh record (in its Delta log); None when the model reads its inputs in full (no state yet,
    recomputed, partitioned, or a table with a file of its record rewritten or gone, which it rebuilds)."""
    model = project.models[name]
    if model.partitioned_by is not None:
        return None
    if (model.materialized or "table") == "stream":
        files = _checkpoint_files(paths.checkpoint(name))
        return {source: files for source in sources} if files else None
    commit = current_commit(warehouse.data_dir(name))
    record = commit.record if commit is not None else None
    if record is None or record.kind not in _INCREMENTAL:
        return None
    out: dict[str, Collection[str]] = {}
    for source, snapshot in sources.items():
        before = record.inputs.get(input_key("source", source), {})
        if appended(before, snapshot) is None:
            return None
        out[source] = before.keys()
    return out


def _checkpoint_files(checkpoint: Loc) -> set[str]:
    """The local files a stream's file sources have read, from its checkpoint's metadata logs (``v1``
    then one JSON line per file); empty without a local checkpoint."""
    out: set[str] = set()
    if not isinstance(checkpoint, Path) or not (checkpoint / "sources").is_dir():
        return out
    for log_file in sorted((checkpoint / "sources").glob("*/*")):
        if log_file.name.startswith("."):
            continue
        for line in log_file.read_text(errors="replace").splitlines()[1:]:
            try:
                uri = json.loads(line)["path"]
            except (ValueError, KeyError, TypeError):
                continue
            parsed = urlparse(uri)
            if parsed.scheme in ("", "file"):
                out.add(unquote(parsed.path))
    return out


def _inputs(compiled: CompiledProject, name: str) -> tuple[set[str], set[str]]:
    """The sources and the upstream models' tables a model reads, directly or through views (which
    store nothing)."""
    sources: set[str] = set()
    tables: set[str] = set()
    todo, seen = [name], set()
    while todo:
        current = todo.pop()
        if current in seen or current not in compiled.models:
            continue
        seen.add(current)
        model = compiled.models[current]
        sources.update(model.sources)
        for up in model.upstream_models:
            upstream = compiled.models.get(up)
            if upstream is not None and upstream.materialized == "view":
                todo.append(up)
            else:
                tables.add(up)
    return sources, tables
