"""Which Dagster instance a command uses, and the errors that say how to fix an unusable one: a
PostgreSQL dagster.yaml without the `postgres` extra, or without the psycopg2 scheme when SQLAlchemy
2.1 is installed over the extra's pin, is one line naming the file and the fix, before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..helpers import write_project

PG = """\
storage:
  postgres:
    postgres_db: {{username: u, password: p, hostname: 127.0.0.1, port: 1, db_name: d{scheme}}}
"""


def status(root: Path, home: Path, *prelude: str) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if k != "STREAMT_DEFINITIONS"}, "DAGSTER_HOME": str(home)}
    code = "; ".join([*prelude, "from dagster_streamt.cli.main import main", "main()"])
    return subprocess.run([sys.executable, "-c", code, "status", "-p", str(root)], env=env, capture_output=True,
                          text=True, timeout=120)


def test_unusable_postgres_config_is_one_line_with_the_fix(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"models/m.yml": "models:\n  - {name: m, sql: SELECT 1 AS x}\n"})
    home = tmp_path / "home"
    home.mkdir()
    import sqlalchemy

    (home / "dagster.yaml").write_text(PG.format(scheme=""))
    bare = status(root, home)
    if tuple(int(x) for x in sqlalchemy.__version__.split(".")[:2]) >= (2, 1):
        assert bare.returncode == 1 and "Traceback" not in bare.stderr, bare.stderr
        assert f"{home / 'dagster.yaml'}: SQLAlchemy" in bare.stderr
        assert "set `scheme: postgresql+psycopg2` under storage.postgres.postgres_db" in bare.stderr

    (home / "dagster.yaml").write_text(PG.format(scheme=", scheme: postgresql+psycopg2"))
    missing = status(root, home, "import sys", "sys.modules['dagster_postgres'] = None")  # extra not installed
    assert missing.returncode == 1 and "Traceback" not in missing.stderr, missing.stderr
    assert (f"error: {home / 'dagster.yaml'} uses postgres storage but dagster_postgres is not installed: "
            "pip install 'dagster-streamt[postgres]'") in missing.stderr


def test_dagster_home_wins_over_the_project_folder(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"models/m.yml": "models:\n  - {name: m, sql: SELECT 1 AS x}\n"})
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    out = status(root, home)
    assert out.returncode == 0 and "never run" in out.stdout, out.stderr
    assert (home / "history").is_dir() and not (root / ".streamt" / "dagster").exists()
