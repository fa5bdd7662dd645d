"""One call that loads, compiles, graphs and checks a project, with a warm cache.

The cache (``target/.streamt-cache.pickle``) is keyed by the content hash of every project file,
the environment name, the ``.env`` files and the values of every variable the project read, so a
warm load only lists and hashes files. No Spark or Dagster import happens here.
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import __version__
from .core.cache import read_cache, write_cache
from .core.loaded import LoadedProject
from .graph.build import build_graph
from .graph.graph import Graph
from .spec.environments import resolve_env_name
from .spec.errors import Diagnostics, ProjectError
from .spec.loader import load_project, project_files

CACHE_FILE = "target/.streamt-cache.pickle"
PARSE_CACHE_FILE = "target/.streamt-parse-cache.pickle"  # SQL hash -> parse summary, survives edits
GRAPH_CACHE_FILE = "target/.streamt-graph.pickle"  # just the graph of a valid project: lineage answers fast
_CACHE_VERSION = 10  # 10: a temporal join on the FROM side is recognised (features kept in Project.derived)


def _code_stamp() -> str:
    """Size and mtime of this package's modules: a changed dagster-streamt invalidates the cache."""
    here = Path(__file__).parent
    return ";".join(f"{p.relative_to(here)}:{s.st_size}:{s.st_mtime_ns}"
                    for p in sorted(here.rglob("*.py")) for s in [p.stat()])


def _project_key(root: Path, env: str | None) -> str:
    """The hash of this code, the environment and every project file; "" when they cannot be read."""
    if not root.is_dir():
        return ""
    try:
        digest = hashlib.sha256(f"{_CACHE_VERSION}:{__version__}:{env}:{_code_stamp()}".encode())
        files = project_files(root)
        files += [f for f in (root / ".env", root / f".env.{env}", *sorted((root / "environments").glob("*.y*ml")))
                  if f.is_file()]
        for f in files:
            digest.update(f"{f.relative_to(root).as_posix()}\0{hashlib.sha256(f.read_bytes()).hexdigest()}\n".encode())
    except OSError:
        return ""
    return digest.hexdigest()


def _env_digest(names: list[str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(f"{name}={os.environ.get(name)}\n".encode())
    return digest.hexdigest()


def _current(key: str) -> Callable[[object], bool]:
    def accept(header: object) -> bool:
        if not (isinstance(header, tuple) and len(header) == 3 and header[0] == key):
            return False
        return bool(_env_digest(list(header[1])) == header[2])
    return accept


def _read_cache(root: Path, key: str) -> LoadedProject | None:
    loaded = read_cache(root / CACHE_FILE, _current(key))
    if not isinstance(loaded, LoadedProject):
        return None
    loaded.project.root = root
    loaded.from_cache = True
    return loaded


def _write_cache(root: Path, key: str, loaded: LoadedProject) -> None:
    env_names = sorted(loaded.project.env_used)
    header = (key, env_names, _env_digest(env_names))  # a changed variable is a miss
    write_cache(root / CACHE_FILE, header, loaded, private=True)  # may hold interpolated secrets: owner-only
    if loaded.errors:
        (root / GRAPH_CACHE_FILE).unlink(missing_ok=True)
    else:
        write_cache(root / GRAPH_CACHE_FILE, header, loaded.graph)


def _parse_cache_version() -> str:
    """Parse summaries are objects of this code: a changed dagster-streamt must not read old ones."""
    return hashlib.sha256(f"{_CACHE_VERSION}:{__version__}:{_code_stamp()}".encode()).hexdigest()


def _read_parse_cache(root: Path) -> dict[str, Any]:
    version = _parse_cache_version()
    cache = read_cache(root / PARSE_CACHE_FILE, lambda stored: stored == version)
    return cache if isinstance(cache, dict) else {}


def _write_parse_cache(root: Path, cache: dict[str, Any]) -> None:
    write_cache(root / PARSE_CACHE_FILE, _parse_cache_version(), cache)


def load(project_dir: str | Path, env: str | None = None, *, use_cache: bool = True) -> LoadedProject:
    """Load, compile, graph and validate a project, from a warm cache when nothing changed.

    Imports neither Spark nor Dagster: lineage, validation and column questions answer from this.

    Args:
        project_dir: The folder holding ``stream_project.yml``.
        env: The environment overlay (``environments/<env>.yml``); default ``$STREAMT_ENV``, else none.
        use_cache: Read and write the cache in ``target/`` (keyed by every project file, the
            environment and the variables the project read).

    Returns:
        The loaded project: ``project`` (the YAML as typed objects), ``compiled`` (rendered SQL,
            output columns), ``graph`` and every ``diagnostics`` entry.

    Raises:
        ProjectError: Only when nothing usable could be loaded; otherwise errors are in
            ``diagnostics`` (and ``errors``) for the caller to report.

    Examples:
        >>> from dagster_streamt import load
        >>> loaded = load("project")
        >>> loaded.project.name, loaded.errors
        ('shop', [])
        >>> loaded.graph.downstream_of("model.orders_clean")[:2]
        ('model.customer_orders', 'model.daily_revenue')
    """
    root = Path(project_dir).resolve()
    env = resolve_env_name(env, root)
    key = _project_key(root, env) if use_cache else ""
    cached = _read_cache(root, key) if key else None
    if cached is not None:
        return cached
    threshold = gc.get_threshold()
    gc.set_threshold(50_000, threshold[1], threshold[2])  # a load allocates millions of small objects
    try:
        return _load_cold(root, env, key, use_cache)
    finally:
        gc.set_threshold(*threshold)


def _load_cold(root: Path, env: str | None, key: str, use_cache: bool) -> LoadedProject:
    from .compile.compiler import compile_project  # sqlglot and Jinja: only needed on a cache miss
    from .validation import validate

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
    loaded = LoadedProject(project, compiled, graph, diags.items)
    validate(loaded, diags)
    if key:
        for linemap in {id(loc.linemap): loc.linemap for loc in project.locations.values()}.values():
            linemap.compact()
        _write_cache(root, key, loaded)
    return loaded


def load_graph(project_dir: str | Path, env: str | None = None) -> Graph:
    """The graph of a valid project, from its own small cache when nothing changed (no pydantic
    objects to unpickle); falls back to a full load, raising ``ProjectError`` on errors."""
    root = Path(project_dir).resolve()
    env = resolve_env_name(env, root)
    key = _project_key(root, env)
    if key:
        graph = read_cache(root / GRAPH_CACHE_FILE, _current(key))
        if isinstance(graph, Graph):
            return graph
    return load_or_raise(root, env).graph


def load_or_raise(project_dir: str | Path, env: str | None = None) -> LoadedProject:
    loaded = load(project_dir, env)
    if loaded.errors:
        raise ProjectError(loaded.diagnostics)
    return loaded


__all__ = ["Diagnostics", "LoadedProject", "ProjectError", "load", "load_or_raise"]
