"""Small helpers to write throwaway projects for tests."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).parents[1]
EXAMPLE = REPO / "project"

ROOT = """\
project:
  name: t
"""


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: YAML text}``; adds a minimal root file when none is given."""
    root.mkdir(parents=True, exist_ok=True)
    if "stream_project.yml" not in files and "stream_project.yaml" not in files:
        files = {"stream_project.yml": ROOT, **files}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def codes(diags: list) -> list[str]:
    return [d.code for d in diags]


def streamt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a separate process."""
    return subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)
