"""`streamt diff --data MODEL --from V [--to V]`: rows added, removed and changed by the model's key between
two versions of its Delta table, read with delta-rs time travel (tables written here with delta-rs, no JVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from deltalake import write_deltalake

from dagster_streamt.cli.main import cli

from ..helpers import write_project

SOURCE = "sources:\n  - name: s\n    format: json\n    path: d\n    columns: [{name: id}, {name: v}]\n"
MODELS = """\
models:
  - name: keyed
    materialized: table
    key: id
    sql: SELECT id, v FROM {{ source("s") }}
  - name: plain
    materialized: table
    sql: SELECT id, v FROM {{ source("s") }}
  - name: shown
    materialized: view
    sql: SELECT id FROM {{ source("s") }}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "p", {"sources/s.yml": SOURCE, "models/m.yml": MODELS})
    for name in ("keyed", "plain"):
        table = root / ".streamt" / "warehouse" / name / "data"
        write_deltalake(str(table), pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
        write_deltalake(str(table), pa.table({"id": [1, 2, 4, 4], "v": ["a", "B", "d", "d"]}), mode="overwrite")
    return root


def _diff(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["diff", "-p", str(root), *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def test_rows_by_key_and_by_whole_row(project: Path) -> None:
    # the key is not unique in version 1 (4 twice): said, and compared by whole row
    code, out, _ = _diff(project, "--data", "keyed", "--from", "0", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["note"] == "key (id) is not unique in these versions: compared by whole row"
    assert (doc["added"], doc["removed"], doc["changed"]) == (3, 2, 0)
    code, out, _ = _diff(project, "--data", "keyed", "--from", "0", "--to", "0")
    assert code == 0 and "added 0, removed 0" in out
    table = project / ".streamt" / "warehouse" / "keyed" / "data"
    write_deltalake(str(table), pa.table({"id": [1, 2, 4], "v": ["a", "B", "d"]}), mode="overwrite")
    code, out, _ = _diff(project, "--data", "keyed", "--from", "0")
    assert code == 0, out
    assert out.splitlines() == [
        "keyed: version 0 (3 rows) -> version 2 (3 rows), by key (id)",
        "  added 1, removed 1, changed 1",
        '  added: {"id": 4, "v": "d"}',
        '  changed: {"id": 2, "v": "b"} -> {"id": 2, "v": "B"}',
        '  removed: {"id": 3, "v": "c"}']
    # no key: a multiset of rows (the duplicate 4 counts twice)
    code, out, _ = _diff(project, "--data", "plain", "--from", "0", "--to", "1", "--format", "json")
    doc = json.loads(out)
    assert (doc["key"], doc["added"], doc["removed"], doc["changed"]) == ([], 3, 2, 0)
    assert doc["samples"]["added"] == [{"id": 2, "v": "B"}, {"id": 4, "v": "d"}, {"id": 4, "v": "d"}]


def test_bad_requests_are_one_clear_line(project: Path) -> None:
    code, _, err = _diff(project, "--data", "keyed", "--from", "7")
    assert code == 1 and "version 7 does not exist: the newest is 1" in err
    code, _, err = _diff(project, "--data", "shown", "--from", "0")
    assert code == 1 and "model shown is a view" in err
    code, _, err = _diff(project, "--data", "keyd", "--from", "0")
    assert code == 2 and "unknown model 'keyd'" in err and "keyed" in err
    code, _, err = _diff(project, "--data", "keyed")
    assert code == 2 and "--data needs --from VERSION" in err
    code, _, err = _diff(project)
    assert code == 2 and "give --base REF" in err
    code, _, err = _diff(project, "--base", "HEAD", "--from", "1")
    assert code == 2 and "use them with --data MODEL" in err
