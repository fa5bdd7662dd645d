"""Where a project's Dagster instance lives, answerable without importing Dagster (``streamt docs``
checks for run history before paying for that import)."""

from __future__ import annotations

import os
from pathlib import Path

INSTANCE_DIR = ".streamt/dagster"


def instance_dir(project_root: Path) -> Path:
    """``$DAGSTER_HOME`` when set, else ``<project>/.streamt/dagster``."""
    home = os.environ.get("DAGSTER_HOME")
    return Path(home) if home else project_root / INSTANCE_DIR
