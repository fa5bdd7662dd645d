"""Small helpers to write throwaway projects for tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

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
