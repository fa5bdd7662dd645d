"""The project's Dagster code location, as the CLI finds it: the same definitions the UI loads, so
every command runs the same jobs and reads the same asset keys (the key map in their metadata).

Where from, first match wins:

1. ``$STREAMT_DEFINITIONS``: a Python file defining ``Definitions``, a ``dg`` project folder, or
   ``default`` (the default translator, whatever else exists);
2. ``<project>/definitions.py`` (what ``dg dev -f`` / ``workspace.yaml`` load);
3. the nearest ``dg`` project above the project folder (a ``pyproject.toml`` with ``[tool.dg]``,
   or a ``dg.toml``), when one of its components loads this project;
4. ``build_definitions(project)`` with the default ``StreamtTranslator``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from ..api import LoadedProject
from ..location_files import DEFINITIONS_FILE, ENV_VAR, dg_config, enclosing_dg_project
from .key_map import KeyMap, KeyMapError


class CodeLocationError(Exception):
    """The code location could not be loaded, or does not define this project: the message says
    which file and what to do."""


@dataclass(frozen=True)
class CodeLocation:
    defs: dg.Definitions
    keys: KeyMap
    origin: str  # for messages: "definitions.py", "dg project /x", "default translator"


_cache: dict[tuple[str, str | None, str | None, str], CodeLocation] = {}


def code_location(loaded: LoadedProject) -> CodeLocation:
    """The code location of ``loaded`` (cached per process, per version of the project's files: a
    process that runs the project again after an edit runs the edited models)."""
    root = loaded.project.root.resolve()
    override = os.environ.get(ENV_VAR) or None
    files = hashlib.sha256(json.dumps(loaded.project.file_hashes, sort_keys=True).encode()).hexdigest()
    memo = (str(root), loaded.project.env, override, files)
    if memo not in _cache:
        _cache[memo] = _find(loaded, root, override)
    return _cache[memo]


def _find(loaded: LoadedProject, root: Path, override: str | None) -> CodeLocation:
    if override == "default":
        return _default(loaded)
    if override:
        target = Path(override).expanduser()
        target = target if target.is_absolute() else Path.cwd() / target
        if target.is_file():
            return _from_defs(loaded, _load_file(target, loaded.project.env), f"{target} ({ENV_VAR})")
        if target.is_dir() and dg_config(target) is not None:
            return _from_defs(loaded, _load_dg_project(target, loaded.project.env), f"dg project {target}")
        raise CodeLocationError(f"{ENV_VAR}={override}: not a Python file nor a dg project folder "
                                "(set it to a definitions file, a dg project, or `default`)")
    local = root / DEFINITIONS_FILE
    if local.is_file():
        return _from_defs(loaded, _load_file(local, loaded.project.env), str(local))
    project = enclosing_dg_project(root)
    if project is not None:
        defs = _load_dg_project(project, loaded.project.env)
        if KeyMap.from_definitions(defs, loaded.project.name) is not None:
            return _from_defs(loaded, defs, f"dg project {project}")
    return _default(loaded)


def _default(loaded: LoadedProject) -> CodeLocation:
    from .definitions import build_definitions

    defs = build_definitions(loaded.project.root, loaded.project.env, loaded=loaded)
    keys = KeyMap.from_definitions(defs, loaded.project.name)
    assert keys is not None
    return CodeLocation(defs, keys, "default translator")


def _from_defs(loaded: LoadedProject, defs: dg.Definitions, origin: str) -> CodeLocation:
    name = loaded.project.name
    try:
        keys = KeyMap.from_definitions(defs, name)
    except KeyMapError as exc:
        raise CodeLocationError(f"{origin}: {exc}") from None
    if keys is None:
        raise CodeLocationError(f"{origin} defines no asset of the streamt project {name!r}: build its definitions "
                                f"with build_definitions({str(loaded.project.root)!r}) or a StreamtProjectComponent, "
                                f"or set {ENV_VAR}=default to use the default asset keys")
    if keys.env != loaded.project.env:
        raise CodeLocationError(f"{origin} loads project {name!r} with environment {keys.env or '(none)'!r} but this "
                                f"command uses {loaded.project.env or '(none)'!r}: pass the same -e/STREAMT_ENV")
    return CodeLocation(defs, keys, origin)


@contextmanager
def _streamt_env(env: str | None) -> Iterator[None]:
    """Code that calls ``build_definitions(path)`` without ``env`` reads STREAMT_ENV: give it ours."""
    before = os.environ.get("STREAMT_ENV")
    if env:
        os.environ["STREAMT_ENV"] = env
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("STREAMT_ENV", None)
        else:
            os.environ["STREAMT_ENV"] = before


@contextmanager
def _on_path(*folders: Path) -> Iterator[None]:
    saved = list(sys.path)
    sys.path[:0] = [str(f) for f in folders if str(f) not in sys.path]
    try:
        yield
    finally:
        sys.path[:] = saved


def _load_file(path: Path, env: str | None) -> dg.Definitions:
    """Import a definitions file the way ``dg dev -f`` does (its folder importable) and take its
    ``defs`` (or its only ``Definitions`` / ``@dg.definitions`` function)."""
    from dagster.components.definitions import LazyDefinitions  # the type @dg.definitions returns

    name = "streamt_code_location_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic and dataclasses resolve the module's annotations through it
    with _streamt_env(env), _on_path(path.parent):
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise CodeLocationError(f"loading {path} failed: {_describe(exc, path)}") from exc
        found = {k: v for k, v in vars(module).items() if isinstance(v, dg.Definitions | LazyDefinitions)}
        if "defs" in found:
            found = {"defs": found["defs"]}
        if len(found) != 1:
            what = f"{len(found)} ({', '.join(sorted(found))})" if found else "none"
            raise CodeLocationError(f"{path} should define one dagster Definitions (named `defs`); found {what}")
        value = next(iter(found.values()))
        if isinstance(value, LazyDefinitions):
            try:
                value = value()
            except Exception as exc:
                raise CodeLocationError(f"loading {path} failed: {_describe(exc, path)}") from exc
    if not isinstance(value, dg.Definitions):
        raise CodeLocationError(f"{path}: expected dagster Definitions, got {type(value).__name__}")
    return value


def _describe(exc: BaseException, path: Path) -> str:
    """The exception and the deepest line of the user's file it passed through."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    where = f" (line {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _load_dg_project(folder: Path, env: str | None) -> dg.Definitions:
    """The dg project's definitions, as ``dg`` builds them (``src/`` importable, like its editable install)."""
    with _streamt_env(env), _on_path(folder / "src", folder):
        try:
            return dg.load_from_defs_folder(path_within_project=folder)
        except Exception as exc:
            raise CodeLocationError(f"loading the dg project {folder} failed: {type(exc).__name__}: {exc}; "
                                    f"fix it, or set {ENV_VAR} to another code location (or `default`)") from exc
