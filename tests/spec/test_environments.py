"""Environment choice as streamt makes it: `-e` over STREAMT_ENV, STREAMT_ENV ignored (with a warning)
without environments/, an environment required when the runtime lives only in environments/, and
no environment name that leaves environments/."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.spec.errors import Severity
from dagster_streamt.spec.loader import load_project

from ..helpers import write_project

NO_RUNTIME = "project: {name: p}\n"
SRC = "sources:\n  - name: s\n    format: json\n    path: data/s\n"


def test_an_environment_name_cannot_leave_environments(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"stream_project.yml": NO_RUNTIME, "environments/dev.yml": "runtime: {}\n"})
    (tmp_path / "p" / "evil.yml").write_text("runtime: {spark: {master: 'local[3]'}}\n")  # environments/../evil.yml
    for name in ("../evil", "..", "dev/../../evil", "/etc/passwd", "..\\evil"):
        project, diags = load_project(root, env=name)
        bad = [d for d in diags.items if d.code == "STR012" and "invalid environment name" in d.message]
        assert bad and bad[0].hint == "pass one of: dev", name
        assert project is not None and project.runtime.spark.master == "local[2]"  # evil.yml never read
        assert "evil.yml" not in project.file_hashes


def test_runtime_only_in_environments_needs_one_and_lists_them(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"stream_project.yml": NO_RUNTIME, "environments/prod.yml": "runtime: {}\n",
                                    "environments/dev.yaml": "runtime: {}\n", "environments/notes.txt": "x"})
    _, diags = load_project(root)
    [err] = [d for d in diags.items if d.code == "STR011"]
    assert "(dev, prod)" in err.message and "-e <env>" in err.hint and err.file == "environments"
    _, diags = load_project(root, env="dev")
    assert not diags.has_errors


def test_an_empty_environments_folder_is_an_error_without_runtime(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"stream_project.yml": NO_RUNTIME})
    (root / "environments").mkdir()
    _, diags = load_project(root)
    assert any(d.code == "STR011" and "no environment file" in d.message for d in diags.items)


def test_a_root_file_with_its_runtime_keeps_environments_as_overlays(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"stream_project.yml": "project: {name: p}\nruntime: {spark: {}}\n",
                                    "environments/prod.yml": "runtime: {spark: {master: 'local[1]'}}\n"})
    project, diags = load_project(root)
    assert not diags.has_errors and project is not None and project.env is None


def test_streamt_env_is_ignored_with_a_warning_without_environments(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_project(tmp_path, {"sources/s.yml": SRC})
    monkeypatch.setenv("STREAMT_ENV", "dev")
    project, diags = load_project(root)
    assert project is not None and project.env is None and not diags.has_errors
    [warn] = [d for d in diags.items if "STREAMT_ENV" in d.message]
    assert warn.severity is Severity.WARNING and "'dev' ignored" in warn.message
    _, diags = load_project(root, env="dev")  # an explicit -e still has to exist
    assert any(d.code == "STR004" for d in diags.items)


def test_streamt_env_selects_an_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_project(tmp_path, {"stream_project.yml": NO_RUNTIME,
                                    "environments/dev.yml": "runtime: {spark: {master: 'local[1]'}}\n"})
    monkeypatch.setenv("STREAMT_ENV", "dev")
    project, diags = load_project(root)
    assert not diags.has_errors and project is not None and project.env == "dev"
    assert project.runtime.spark.master == "local[1]"
