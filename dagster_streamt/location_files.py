"""Which file defines a project's Dagster code location, answerable without importing Dagster
(``streamt run`` starts its JVM before paying for that import when the location is the default one).
:mod:`dagster_streamt.dagster.code_location` loads what these files name."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

ENV_VAR = "STREAMT_DEFINITIONS"
DEFINITIONS_FILE = "definitions.py"


def dg_config(folder: Path) -> Path | None:
    """``dg.toml``, or a ``pyproject.toml`` with a ``[tool.dg]`` project section, in ``folder``."""
    if (folder / "dg.toml").is_file():
        return folder / "dg.toml"
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file():
        try:
            data: dict[str, Any] = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return None
        dg_section = data.get("tool", {}).get("dg", {})
        if dg_section.get("directory_type", "project") == "project" and "project" in dg_section:
            return pyproject
    return None


def enclosing_dg_project(root: Path) -> Path | None:
    for folder in (root, *root.parents):
        if dg_config(folder) is not None:
            return folder
    return None


def default_location(root: Path) -> bool:
    """True when nothing can replace the default definitions (and so the default Spark resource):
    ``$STREAMT_DEFINITIONS`` unset or ``default``, no ``definitions.py``, no enclosing dg project."""
    override = os.environ.get(ENV_VAR) or None
    if override == "default":
        return True
    return override is None and not (root / DEFINITIONS_FILE).is_file() and enclosing_dg_project(root) is None
