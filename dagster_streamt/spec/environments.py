"""Which environment a load uses, the way streamt decides it (``streamt/core/environment.py``).

- ``-e`` wins over ``STREAMT_ENV``; a project without an ``environments/`` folder ignores
  ``STREAMT_ENV`` with a warning (streamt: "ignored in single-environment mode").
- A project whose runtime lives only in ``environments/`` (no ``runtime:`` in the root file, streamt's
  multi-environment layout) needs an environment, and the error lists them. A root file with its own
  ``runtime:`` is complete, and its ``environments/*.yml`` are overlays (a deliberate difference:
  streamt ignores the root runtime then).
- An environment name is a file name in ``environments/``: ``-e ../evil`` is refused, never read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .errors import Diagnostics, Severity

ENV_DIR = "environments"
# streamt allows letters, digits and hyphens; underscores are accepted too (a file name, never a path)
ENV_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def resolve_env_name(env: str | None, root: Path | None = None) -> str | None:
    """``-e``, else ``STREAMT_ENV`` unless ``root`` is a single-environment project (no ``environments/``)."""
    if env:
        return env
    from_var = os.environ.get("STREAMT_ENV") or None
    if from_var and root is not None and not (root / ENV_DIR).is_dir():
        return None
    return from_var


def available(root: Path) -> list[str]:
    folder = root / ENV_DIR
    if not folder.is_dir():
        return []
    return sorted({p.stem for p in folder.iterdir() if p.is_file() and p.suffix in (".yml", ".yaml")})


def env_file(root: Path, env: str) -> Path | None:
    """The file of a valid environment name, only ever inside ``environments/``."""
    folder = (root / ENV_DIR).resolve()
    for ext in (".yml", ".yaml"):
        path = (folder / f"{env}{ext}").resolve()
        if path.parent == folder and path.is_file():
            return path
    return None


def check_environment(root: Path, env: str | None, root_data: dict[str, Any], diags: Diagnostics,
                      root_file: str) -> bool:
    """Diagnostics for the environment choice; False when ``env`` must not be loaded at all."""
    names = available(root)
    listed = ", ".join(names)
    if env is None:
        ignored = os.environ.get("STREAMT_ENV")
        if ignored and not (root / ENV_DIR).is_dir():
            diags.add("STR004", f"STREAMT_ENV={ignored!r} ignored: the project has no environments/ folder "
                      "(a single-environment project, as streamt treats it)", file=root_file,
                      severity=Severity.WARNING, hint="unset STREAMT_ENV, or create environments/<env>.yml")
        if (root / ENV_DIR).is_dir() and "runtime" not in root_data:
            if not names:
                diags.add("STR011", "environments/ holds no environment file, and the root file has no "
                          "`runtime:`", file=ENV_DIR, hint="add environments/dev.yml with a `runtime:` section")
            else:
                diags.add("STR011", f"the project keeps its runtime in environments/ ({listed}): choose one",
                          file=ENV_DIR, hint=f"pass -e <env> or set STREAMT_ENV (available: {listed})")
        return True
    if not ENV_NAME.match(env):
        diags.add("STR012", f"invalid environment name {env!r}: an environment is a file in environments/, "
                  "named with letters, digits, '-' and '_'", file=ENV_DIR,
                  hint=f"pass one of: {listed}" if names else "create environments/<env>.yml")
        return False
    return True


__all__ = ["ENV_DIR", "ENV_NAME", "available", "check_environment", "env_file", "resolve_env_name"]
