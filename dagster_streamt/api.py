"""One call that loads, compiles, graphs and checks a project, with a warm cache.

The cache (``target/.streamt-cache.pickle``) is keyed by the content hash of every project file,
the environment name, the ``.env`` files and the values of every variable the project read, so a
warm load only lists and hashes files. No Spark or Dagster import happens here.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .compile.compiled import CompiledProject
from .graph.build import build_graph
from .graph.graph import Graph
from .rules import check_rules
from .schedules_check import check_schedules
from .sinks_check import check_sinks
from .spec.errors import Diagnostic, Diagnostics, ProjectError
from .spec.loader import load_project, project_files, resolve_env_name
from .spec.project import Project

CACHE_FILE = "target/.streamt-cache.pickle"
PARSE_CACHE_FILE = "target/.streamt-parse-cache.pickle"  # SQL hash -> parse summary, survives edits
GRAPH_CACHE_FILE = "target/.streamt-graph.pickle"  # just the graph of a valid project: lineage answers fast
_CACHE_VERSION = 7


@dataclass
class LoadedProject:
    project: Project
    compiled: CompiledProject
    graph: Graph
    diagnostics: list[Diagnostic]
    from_cache: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        """Errors that make the project unusable (governance findings are not among them)."""
        return [d for d in self.diagnostics if d.blocks]

    @property
    def findings(self) -> list[Diagnostic]:
        """Governance findings: ``streamt validate`` fails on them, everything else still works."""
        return [d for d in self.diagnostics if d.is_error and d.is_governance]


def _code_stamp() -> str:
    """Size and mtime of this package's modules: a changed dagster-streamt invalidates the cache."""
    here = Path(__file__).parent
    return ";".join(f"{p.relative_to(here)}:{s.st_size}:{s.st_mtime_ns}"
                    for p in sorted(here.rglob("*.py")) for s in [p.stat()])


def _fingerprint(root: Path, env: str | None) -> tuple[str, dict[str, str]]:
    digest = hashlib.sha256(f"{_CACHE_VERSION}:{__version__}:{env}:{_code_stamp()}".encode())
    hashes: dict[str, str] = {}
    files = project_files(root)
    for extra in (root / ".env", root / f".env.{env}", *(sorted((root / "environments").glob("*.y*ml"))
                                                         if (root / "environments").is_dir() else [])):
        if extra.is_file():
            files.append(extra)
    for f in files:
        h = hashlib.sha256(f.read_bytes()).hexdigest()
        rel = f.relative_to(root).as_posix()
        hashes[rel] = h
        digest.update(f"{rel}\0{h}\n".encode())
    return digest.hexdigest(), hashes


def _env_digest(used: dict[str, str | None]) -> str:
    digest = hashlib.sha256()
    for name in sorted(used):
        digest.update(f"{name}={os.environ.get(name)}\n".encode())
    return digest.hexdigest()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Unpickling a big cache creates millions of objects; the cyclic GC would rescan them again and
    again (5x slower at 10,000 models). Nothing cyclic is garbage while we load."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _read_cache(root: Path, key: str) -> LoadedProject | None:
    path = root / CACHE_FILE
    try:
        with path.open("rb") as fh:
            stored_key, env_names, env_digest = pickle.load(fh)  # a small header: check before the payload
            if stored_key != key or _env_digest(dict.fromkeys(env_names)) != env_digest:
                return None
            with gc_paused():
                loaded: LoadedProject = pickle.load(fh)
    except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError, ImportError):
        return None
    loaded.project.root = root
    loaded.from_cache = True
    return loaded


def _write_cache(root: Path, key: str, loaded: LoadedProject) -> None:
    path = root / CACHE_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            os.chmod(tmp, 0o600)  # may hold interpolated secrets: owner-only
            names = sorted(loaded.project.env_used)
            pickle.dump((key, names, _env_digest(dict.fromkeys(names))), fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(loaded, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        gpath = root / GRAPH_CACHE_FILE
        if loaded.errors:
            gpath.unlink(missing_ok=True)
        else:
            gtmp = gpath.with_suffix(f".{os.getpid()}.tmp")
            with gtmp.open("wb") as fh:
                pickle.dump((key, names, _env_digest(dict.fromkeys(names))), fh, protocol=pickle.HIGHEST_PROTOCOL)
                pickle.dump(loaded.graph, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(gtmp, gpath)
    except OSError:
        pass  # a read-only project still works, just without the warm cache


def _parse_cache_version() -> str:
    """Parse summaries are objects of this code: a changed dagster-streamt must not read old ones."""
    return hashlib.sha256(f"{_CACHE_VERSION}:{__version__}:{_code_stamp()}".encode()).hexdigest()


def _read_parse_cache(root: Path) -> dict[str, Any]:
    try:
        with (root / PARSE_CACHE_FILE).open("rb") as fh:
            version, cache = pickle.load(fh)
        return cache if version == _parse_cache_version() and isinstance(cache, dict) else {}
    except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError, ImportError):
        return {}


def _write_parse_cache(root: Path, cache: dict[str, Any]) -> None:
    path = root / PARSE_CACHE_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            pickle.dump((_parse_cache_version(), cache), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass


def load(project_dir: str | Path, env: str | None = None, *, use_cache: bool = True) -> LoadedProject:
    """Load a project. Raises :class:`ProjectError` only when nothing usable could be loaded;
    otherwise errors are in ``diagnostics`` for the caller to report."""
    root = Path(project_dir).resolve()
    env = resolve_env_name(env)
    key = ""
    if use_cache and root.is_dir():
        try:
            key, _ = _fingerprint(root, env)
        except OSError:
            key = ""
        if key:
            cached = _read_cache(root, key)
            if cached is not None:
                return cached
    threshold = gc.get_threshold()
    gc.set_threshold(50_000, threshold[1], threshold[2])  # a load allocates millions of small objects
    try:
        return _load_cold(root, env, key, use_cache)
    finally:
        gc.set_threshold(*threshold)


def _load_cold(root: Path, env: str | None, key: str, use_cache: bool) -> LoadedProject:
    from .checks.validate import check_tests
    from .compile.compiler import compile_project  # sqlglot and Jinja: only needed on a cache miss

    project, diags = load_project(root, env)
    if project is None:
        raise ProjectError(diags.items)
    parse_cache = _read_parse_cache(root) if use_cache else None
    compiled, cdiags = compile_project(project, parse_cache)
    if parse_cache is not None:
        _write_parse_cache(root, parse_cache)
    diags.extend(cdiags)
    graph, gdiags = build_graph(project, compiled)
    diags.extend(gdiags)
    diags.extend(check_rules(project, graph))
    diags.extend(check_schedules(project, graph))
    diags.extend(check_sinks(project, graph))
    loaded = LoadedProject(project, compiled, graph, diags.items)
    inferred = None
    if any("accepted_types" in a for t in project.tests.values() for a in t.assertions) and not diags.has_blocking:
        from .lineage.project_columns import column_lineage, inferred_types

        inferred = inferred_types(loaded, column_lineage(loaded))  # types through SELECT lists
    diags.extend(check_tests(project, compiled, graph, inferred))
    loaded.diagnostics = diags.items
    sec = project.rules.security
    if (sec.sensitive_columns_require_masking or sec.highly_sensitive_columns_require_encryption) \
            and not diags.has_blocking:
        from .lineage.project_columns import check_masking

        unmasked, unencrypted = check_masking(loaded)
        for exposure, model, column, origins in unmasked if sec.sensitive_columns_require_masking else []:
            file, line = project.where("model", model)
            diags.add("GOV302", f"model {model!r} passes sensitive column {column!r} (from {origins}) to exposure "
                      f"{exposure!r} unmasked", file=file, line=line,
                      hint=f"add `security: {{policies: [{{mask: {{column: {column}, method: hash}}}}]}}` to "
                           f"{model!r} or stop selecting the column")
        for exposure, model, column, origins in unencrypted if sec.highly_sensitive_columns_require_encryption else []:
            file, line = project.where("model", model)
            diags.add("GOV304", f"model {model!r} passes highly sensitive column {column!r} (from {origins}) to "
                      f"exposure {exposure!r} without hashing or tokenizing it", file=file, line=line,
                      hint=f"mask {column!r} with `method: hash` or `tokenize` in {model!r}")
        loaded.diagnostics = diags.items
    if key:
        for linemap in {id(loc.linemap): loc.linemap for loc in project.locations.values()}.values():
            linemap.compact()
        _write_cache(root, key, loaded)
    return loaded


def load_graph(project_dir: str | Path, env: str | None = None) -> Graph:
    """The graph of a valid project, from its own small cache when nothing changed (no pydantic
    objects to unpickle); falls back to a full load, raising :class:`ProjectError` on errors."""
    root = Path(project_dir).resolve()
    env = resolve_env_name(env)
    try:
        key, _ = _fingerprint(root, env) if root.is_dir() else ("", {})
        if key:
            with (root / GRAPH_CACHE_FILE).open("rb") as fh:
                stored_key, env_names, env_digest = pickle.load(fh)
                if stored_key == key and _env_digest(dict.fromkeys(env_names)) == env_digest:
                    with gc_paused():
                        graph: Graph = pickle.load(fh)
                    return graph
    except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError, ImportError):
        pass
    return load_or_raise(root, env).graph


def load_or_raise(project_dir: str | Path, env: str | None = None) -> LoadedProject:
    loaded = load(project_dir, env)
    if loaded.errors:
        raise ProjectError(loaded.diagnostics)
    return loaded


__all__ = ["Diagnostics", "LoadedProject", "ProjectError", "load", "load_or_raise"]
