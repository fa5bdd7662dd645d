"""Sink modes and keys in the project format: located errors for bad values, and `streamt validate`
says when a sink appends (a history) or when a mode cannot work."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from dagster_streamt.api import load
from dagster_streamt.spec.connectors import model_key

from ..helpers import write_project

SOURCES = """\
sources:
  - name: raw
    format: json
    path: in
"""


def _project(tmp_path: Path, sinks: str, stream: bool = False) -> Path:
    """``models/models.yml`` with ``orders`` (lines 2-4) followed by ``sinks`` (from line 5)."""
    kind = "stream" if stream else "table"
    head = f"models:\n- name: orders\n  materialized: {kind}\n  sql: SELECT * FROM {{{{ source('raw') }}}}\n"
    return write_project(tmp_path, {"sources/raw.yml": SOURCES, "models/models.yml": head + textwrap.dedent(sinks)})


def _diags(root: Path) -> list[tuple[str, str, int, str]]:
    return [(d.code, d.severity.value, d.line, d.message) for d in load(root, use_cache=False).diagnostics]


def test_append_on_a_snapshot_is_a_located_note(tmp_path: Path) -> None:
    root = _project(tmp_path, """\
          - name: history
            from: orders
            sink: {format: json, path: out, mode: append}
        """)
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "validate", "-p", str(root)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "models.yml:7: note STR080: sink 'history' appends" in r.stdout, r.stdout
    assert "fix: remove `mode: append`" in r.stdout
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "validate", "-p", str(root), "--format",
                        "json"], capture_output=True, text=True, timeout=120)
    doc = json.loads(r.stdout)
    assert doc["valid"] and [d["severity"] for d in doc["diagnostics"] if d["code"] == "STR080"] == ["note"]


def test_default_and_stream_append_have_no_note(tmp_path: Path) -> None:
    root = _project(tmp_path, """\
          - name: snap
            from: orders
            sink: {format: json, path: out}
          - name: log
            from: orders
            sink: {format: json, path: out2, mode: append}
        """, stream=True)
    assert [c for c, *_ in _diags(root) if c.startswith("STR08")] == []


def test_bad_mode_is_a_located_error(tmp_path: Path) -> None:
    root = _project(tmp_path, """\
          - name: s
            from: orders
            sink:
              format: json
              path: out
              mode: upsret
        """)
    diags = _diags(root)
    bad = [d for d in diags if d[0] == "STR012"]
    assert bad and bad[0][2] == 10, diags
    assert "replace" in bad[0][3] and "upsert" in bad[0][3], bad


def test_key_forms_and_bad_keys(tmp_path: Path) -> None:
    root = _project(tmp_path, """\
          - name: a
            from: orders
            key: "order_id, tier"
            sink: {format: json, path: a}
          - name: b
            from: orders
            key: ignored
            sink: {format: json, path: b, key: order_id}
          - name: c
            from: orders
            sink: {format: json, path: c, key: []}
        """)
    loaded = load(root, use_cache=False)
    errors = [(d.code, d.line) for d in loaded.diagnostics if d.is_error]
    assert errors == [("STR012", 15)], loaded.diagnostics
    models = loaded.project.models
    assert model_key(models["a"]) == ("order_id", "tier")
    assert model_key(models["b"]) == ("order_id",)


def test_modes_that_cannot_work_are_errors(tmp_path: Path) -> None:
    root = _project(tmp_path, """\
          - name: up
            from: orders
            sink: {format: json, path: out, mode: upsert}
          - name: rep
            from: orders
            sink: {format: json, path: out2, mode: replace}
        """, stream=True)
    got = [(c, line, m.split(":")[0]) for c, sev, line, m in _diags(root) if c == "STR081"]
    assert got == [("STR081", 7, "sink 'up'"), ("STR081", 10, "sink 'rep'")], got
