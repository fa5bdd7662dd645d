"""Every YAML block of streamt's documentation loads: no key it documents is unknown or mis-shaped.

The blocks (tests/compat/streamt_doc_snippets.yml, extracted by extract_doc_snippets.py) are loaded
as projects; only schema problems count (references to sources a fragment does not define do not).
The few blocks that are sketches, not configuration, are listed with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spec.loader import load_project

from ..helpers import write_project
from .snippets import SCHEMA_CODES, load_snippets, project_files

NOT_CONFIGURATION = {
    ("docs/concepts/tests.md", 437): "a sketch of test layers: `assertions: [not_null, accepted_values]` names them",
    ("docs/concepts/tests.md", 489): "`alert: ...` is an ellipsis standing for the alert shown above it",
    ("docs/guides/multi-environment.md", 328): "an excerpt about secrets: the registry `url` is elided",
    ("docs/reference/configuration.md", 12): "the file-structure skeleton: every section is `...`",
    ("docs/reference/yaml-schema.md", 252): "the Avro definition's fields are elided as `[...]`",
    ("docs/specs/multi-environment.md", 182): "an internal spec listing field types (`protected: bool`)",
}
SNIPPETS = [s for s in load_snippets() if s["kind"] in ("project", "fragment")]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"{s['doc']}:{s['line']}" for s in SNIPPETS])
def test_documented_block_loads(snippet: dict[str, Any], tmp_path: Path) -> None:
    files, env = project_files(snippet)
    write_project(tmp_path, files)
    _, diags = load_project(tmp_path, env, environ={})
    problems = [d.format() for d in diags.items if d.is_error and d.code in SCHEMA_CODES]
    if (snippet["doc"], snippet["line"]) in NOT_CONFIGURATION:
        assert problems, "this block now loads: remove it from NOT_CONFIGURATION"
        return
    assert not problems, "\n".join(problems)


def test_corpus_covers_the_documentation() -> None:
    kinds = [s["kind"] for s in load_snippets()]
    assert len(SNIPPETS) >= 270 and kinds.count("project") >= 170
