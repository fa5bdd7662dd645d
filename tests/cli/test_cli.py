"""The streamt CLI as a user runs it: real subprocesses, exit codes, output formats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..helpers import EXAMPLE, streamt, write_project


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example YAML (not its data) so tests never write into the repo."""
    dst = tmp_path_factory.mktemp("cli") / "project"
    shutil.copytree(EXAMPLE, dst, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    return dst


def test_validate_ok(example: Path) -> None:
    r = streamt("validate", "-p", str(example))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Project shop (1.0.0): 2 sources, 6 models, 6 tests, 2 exposures, 1 schedule(s)" in r.stdout
    assert r.stdout.strip().endswith("✓ valid: 0 error(s), 0 warning(s)")


def test_validate_errors_exit_1_without_traceback(tmp_path: Path) -> None:
    write_project(tmp_path, {"models/m.yml": "models:\n  - name: m\n    sql: SELECT FROM WHERE\n    colour: red\n"})
    r = streamt("validate", "-p", str(tmp_path))
    assert r.returncode == 1
    assert "Traceback" not in r.stdout + r.stderr
    assert "models/m.yml:4: error STR010: model 'm': unknown key 'colour'" in r.stdout
    assert "✗ invalid: " in r.stdout
    j = streamt("validate", "-p", str(tmp_path), "--format", "json")
    doc = json.loads(j.stdout)
    assert j.returncode == 1 and doc["valid"] is False and doc["errors"] >= 2


def test_usage_errors_exit_2(example: Path) -> None:
    assert streamt("lineage", "-p", str(example), "--format", "png").returncode == 2
    r = streamt("lineage", "-p", str(example), "--model", "orders_clen")
    assert r.returncode == 2 and 'did you mean "orders_clean"' in r.stderr
    assert streamt("lineage", "-p", str(example), "--downstream").returncode == 2
    assert streamt("frobnicate").returncode == 2


def test_missing_project_exits_1(tmp_path: Path) -> None:
    r = streamt("validate", "-p", str(tmp_path))
    assert r.returncode == 1 and "STR003" in r.stdout and "Traceback" not in r.stderr


def test_lineage_ascii_downstream_with_impact(example: Path) -> None:
    r = streamt("lineage", "-p", str(example), "--model", "orders_clean", "--downstream")
    assert r.returncode == 0
    assert r.stdout.splitlines()[:4] == [
        "Lineage for: orders_clean",
        "orders_clean (stream) ← YOU ARE HERE",
        "Downstream:",
        "  ├── customer_orders (table)",
    ]
    assert "  │   └── billing_service (exposure: application, owner billing-team)" in r.stdout
    assert ("Changes to orders_clean will affect: 4 models: customer_orders, daily_revenue, high_value_orders, "
            "order_metrics; "
            "1 sink: orders_export; 2 exposures: billing_service, ops_dashboard") in r.stdout


def test_lineage_upstream(example: Path) -> None:
    r = streamt("lineage", "-p", str(example), "-m", "billing_service", "--upstream")
    assert r.returncode == 0
    assert r.stdout.splitlines() == [
        "Lineage for: billing_service",
        "Upstream:",
        "  └── customer_orders (table)",
        "      ├── orders_clean (stream)",
        "      │   └── orders_raw (source: json files data/orders)",
        "      └── customers (source: csv files data/customers)",
        "billing_service (exposure: application, owner billing-team) ← YOU ARE HERE",
    ]


def test_lineage_json_is_sorted_and_typed(example: Path) -> None:
    r = streamt("lineage", "-p", str(example), "-m", "orders_clean", "--downstream", "--format", "json")
    doc = json.loads(r.stdout)
    ids = [n["id"] for n in doc["nodes"]]
    assert ids == sorted(ids)
    assert doc["nodes"][0] == {"id": "exposure.billing_service", "type": "exposure", "name": "billing_service",
                               "materialized": None, "owner": "billing-team", "tags": []}
    assert {"from": "model.orders_clean", "to": "model.order_metrics"} in doc["edges"]
    assert doc["impact"]["exposures"] == ["exposure.billing_service", "exposure.ops_dashboard"]
    assert r.stdout == streamt("lineage", "-p", str(example), "-m", "orders_clean", "--downstream",
                               "--format", "json").stdout


def test_lineage_mermaid_and_tag_filter(example: Path, tmp_path: Path) -> None:
    out = tmp_path / "g.mmd"
    r = streamt("lineage", "-p", str(example), "--format", "mermaid", "-o", str(out))
    assert r.returncode == 0
    text = out.read_text()
    assert text.startswith("graph LR\n")
    assert '    source_orders_raw[("orders_raw (source: json files data/orders)")]' in text
    assert "    model_orders_clean --> model_order_metrics" in text
    r = streamt("lineage", "-p", str(example), "--tag", "metrics")
    assert r.stdout.strip() == "order_metrics (stream)"
    assert streamt("lineage", "-p", str(example), "--tag", "nope").returncode == 2


def test_compile_writes_sorted_manifest_and_sql(example: Path) -> None:
    r = streamt("compile", "-p", str(example))
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = json.loads((example / "target" / "manifest.json").read_text())
    assert list(manifest) == sorted(manifest)
    assert manifest["models"]["orders_clean"]["depends_on"] == {"models": [], "sources": ["orders_raw"]}
    assert manifest["models"]["orders_export"]["depends_on"]["models"] == ["orders_clean"]
    assert len(manifest["content_hash"]) == 64
    assert manifest["dag"]["execution_levels"][0] == ["model.orders_clean"]
    sql = (example / "target" / "compiled" / "orders_clean.sql").read_text()
    assert "FROM `orders_raw`" in sql and "amount > 0" in sql
    first = (example / "target" / "manifest.json").read_text()
    streamt("compile", "-p", str(example))
    assert (example / "target" / "manifest.json").read_text() == first  # deterministic


def test_compile_refuses_invalid_project(tmp_path: Path) -> None:
    write_project(tmp_path, {"models/m.yml": "models:\n  - name: m\n    sql: SELECT x FROM {{ ref('nope') }}\n"})
    r = streamt("compile", "-p", str(tmp_path))
    assert r.returncode == 1 and "REF001" in r.stdout
    assert not (tmp_path / "target" / "manifest.json").exists()


def test_relative_project_dir_and_env_flag(example: Path) -> None:
    r = streamt("validate", "-p", "project", "-e", "prod", cwd=example.parent)
    assert r.returncode == 0 and "env prod" in r.stdout


def test_a_sqlite_connection_finalized_on_another_thread_prints_no_traceback(tmp_path: Path) -> None:
    """SQLAlchemy's pool logs a traceback when the garbage collector finalizes one of the Dagster
    instance's SQLite connections on another thread (it closes it anyway): every command drops that one
    message, and only that one."""
    import io
    import logging
    import sqlite3
    import threading

    from click.testing import CliRunner

    from dagster_streamt.cli.main import cli

    assert CliRunner().invoke(cli, ["validate", "-p", str(EXAMPLE)]).exit_code == 0
    out = io.StringIO()
    pool = logging.getLogger("sqlalchemy.pool.impl.NullPool")
    handler = logging.StreamHandler(out)
    pool.addHandler(handler)
    try:
        conn = sqlite3.connect(str(tmp_path / "x.db"))

        def use_elsewhere() -> None:
            try:
                conn.execute("SELECT 1")
            except sqlite3.ProgrammingError:
                pool.error("Exception during reset or similar", exc_info=True)
            try:
                raise sqlite3.OperationalError("disk I/O error")
            except sqlite3.OperationalError:
                pool.error("Exception during reset or similar", exc_info=True)

        thread = threading.Thread(target=use_elsewhere)
        thread.start()
        thread.join()
    finally:
        pool.removeHandler(handler)
    assert "same thread" not in out.getvalue() and "disk I/O error" in out.getvalue()
