"""`streamt plan` against each model's last run, and `streamt run --changed` (issue 41): on the example, a
first run, new data (incremental), an edited filter and description (breaking, metadata, and the downstream
that must refresh fully); the changed run leaves every table and the export equal to a full rebuild of the
edited project, read back with delta-rs and pyarrow."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from ..conftest import StreamtHere

ROOT = Path(__file__).parents[2]
TABLES = ["customer_orders", "order_metrics", "orders_clean"]
pytestmark = pytest.mark.spark


def _generate(project: Path, *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / "project" / "generate.py"), "--out", str(project / "data"),
                    "--orders", "2000", "--customers", "100", *args], check=True, capture_output=True)


def _plan(streamt_here: StreamtHere, project: Path, *args: str) -> tuple[int, dict[str, dict[str, Any]], list[str]]:
    done = streamt_here("plan", "-p", str(project), "--format", "json", *args)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    doc = json.loads(done.stdout)
    return done.returncode, {c["name"]: c for c in doc["changes"] if c["kind"] == "model"}, doc["order"]


def _rows(project: Path) -> dict[str, list[str]]:
    """Every model table's rows and the Parquet export's, each sorted, as JSON lines."""
    out = {t: DeltaTable(str(project / ".streamt" / "warehouse" / t / "data")).to_pyarrow_table().to_pylist()
           for t in TABLES}
    out["orders_export"] = pq.read_table(project / "exports" / "orders").to_pylist()
    return {t: sorted(json.dumps(r, sort_keys=True, default=str) for r in rows) for t, rows in out.items()}


def test_plan_classes_against_the_last_run_and_run_changed_equals_a_rebuild(
        tmp_path: Path, streamt_here: StreamtHere) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(ROOT / "project", shop, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    _generate(shop)
    code, plan, order = _plan(streamt_here, shop)
    assert code == 0 and {m: (c["change"], c["refresh"], c["reason"]) for m, c in plan.items()} == {
        m: ("new", "full", "never run here") for m in [*TABLES, "daily_revenue", "high_value_orders", "orders_export"]}
    first = streamt_here("run", "-p", str(shop))
    assert first.returncode == 0, first.stdout + first.stderr

    # as the run left it: nothing to do (daily_revenue runs per partition: a backfill)
    code, plan, order = _plan(streamt_here, shop)
    assert {m: (c["change"], c["refresh"]) for m, c in plan.items() if m != "daily_revenue"} == {
        m: ("unchanged", "none") for m in [*TABLES, "high_value_orders", "orders_export"]}
    assert order == ["daily_revenue"]
    # new orders: the models that read them run as usual, incrementally
    _generate(shop, "--append", "--seed", "8")
    code, plan, order = _plan(streamt_here, shop)
    assert {m: c["refresh"] for m, c in plan.items()} == {
        "customer_orders": "incremental", "daily_revenue": "full", "high_value_orders": "incremental",
        "order_metrics": "incremental", "orders_clean": "incremental", "orders_export": "incremental"}

    # a changed filter and a changed description
    clean = shop / "models" / "staging" / "orders_clean.yml"
    clean.write_text(clean.read_text().replace('AND amount > {{ var("min_amount") }}', "AND amount > 50"))
    marts = shop / "models" / "marts" / "customer_orders.yml"
    marts.write_text(marts.read_text().replace("One row per customer", "Each customer"))
    code, plan, order = _plan(streamt_here, shop, "--fail-on", "breaking")
    assert code == 3
    assert plan["orders_clean"]["change"] == "breaking" and plan["orders_clean"]["refresh"] == "full"
    assert plan["orders_clean"]["reason"] == ("filter: NOT order_id IS NULL AND amount > 0 -> "
                                              "NOT order_id IS NULL AND amount > 50")
    assert plan["customer_orders"]["change"] == "metadata" and plan["customer_orders"]["refresh"] == "full"
    assert plan["customer_orders"]["reasons"] == ["description changed", "upstream orders_clean changed (breaking)"]
    assert plan["order_metrics"] == {**plan["order_metrics"], "change": "unchanged", "refresh": "full"}
    assert order == ["orders_clean", "customer_orders", "daily_revenue", "high_value_orders", "order_metrics",
                     "orders_export"]

    changed = streamt_here("run", "-p", str(shop), "--changed")
    assert changed.returncode == 0, changed.stdout + changed.stderr
    assert "Changed since the last run: orders_clean, customer_orders, daily_revenue, high_value_orders, " \
           "order_metrics, orders_export" in changed.stdout
    code, plan, order = _plan(streamt_here, shop)
    assert order == ["daily_revenue"] and {c["change"] for c in plan.values()} == {"unchanged", "new"}
    nothing = streamt_here("run", "-p", str(shop), "--changed", "-s", "orders_clean customer_orders")
    assert nothing.returncode == 0 and "Nothing to run: every selected model is as its last run left it" in \
        nothing.stdout, nothing.stdout

    # a model removed from the project: its table is left as it is, the plan says so
    (shop / "models" / "marts" / "orders_export.yml").unlink()
    code, plan, order = _plan(streamt_here, shop, "--fail-on", "destructive")
    assert code == 3 and plan["orders_export"]["change"] == "destructive" and order == ["daily_revenue"]
    assert plan["orders_export"]["reason"].startswith("removed since its last run")
    (shop / "models" / "marts" / "orders_export.yml").write_text(
        (ROOT / "project" / "models" / "marts" / "orders_export.yml").read_text())

    # the same edited project built from nothing
    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(shop, rebuilt, ignore=shutil.ignore_patterns(".streamt", "target", "exports"))
    full = streamt_here("run", "-p", str(rebuilt))
    assert full.returncode == 0, full.stdout + full.stderr
    want, got = _rows(rebuilt), _rows(shop)
    assert {t: len(rows) for t, rows in got.items()} == {t: len(rows) for t, rows in want.items()}
    assert got == want
    assert all(json.loads(r)["amount"] > 50 for r in got["orders_clean"])


def _payments_rows(project: Path) -> dict[str, list[str]]:
    """Each model's Delta table and local topic folder, rows sorted."""
    out: dict[str, list[str]] = {}
    for model in ("customer_balances", "payments_clean"):
        table = DeltaTable(str(project / ".streamt" / "warehouse" / model / "data")).to_pyarrow_table().to_pylist()
        out[model] = sorted(json.dumps(r, sort_keys=True, default=str) for r in table)
        lines = [ln for f in sorted((project / "topics" / model).glob("*.json")) for ln in f.read_text().splitlines()]
        out[f"topic {model}"] = sorted(json.dumps(json.loads(ln), sort_keys=True) for ln in lines if ln.strip())
    return out


def test_streamt_payments_example_a_changed_window_then_run_changed_equals_a_rebuild(
        tmp_path: Path, streamt_here: StreamtHere) -> None:
    """streamt's payments example on local topics: its windowed stream's window changed is state_incompatible;
    `run --changed` restarts it from a new checkpoint, and its table and topic equal a rebuild's (a full refresh
    also starts the topic's publication over: it read the replaced table)."""
    pay = tmp_path / "pay"
    shutil.copytree(ROOT / "tests" / "compat" / "streamt_projects" / "payments_example", pay)
    subprocess.run([sys.executable, str(ROOT / "tests" / "compat" / "streamt_data.py"), str(pay),
                    "payments_example"], check=True, capture_output=True)
    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(pay, rebuilt)
    first = streamt_here("run", "-p", str(pay), "-e", "local")
    assert first.returncode == 0, first.stdout + first.stderr
    for root in (pay, rebuilt):
        text = (root / "stream_project.yml").read_text()
        (root / "stream_project.yml").write_text(text.replace("INTERVAL '5' MINUTE", "INTERVAL '10' MINUTE"))
    code, plan, order = _plan(streamt_here, pay, "-e", "local")
    assert code == 0 and plan["customer_balances"]["change"] == "state_incompatible" and order == ["customer_balances"]
    assert plan["payments_clean"]["refresh"] == "none"
    changed = streamt_here("run", "-p", str(pay), "-e", "local", "--changed")
    assert changed.returncode == 0, changed.stdout + changed.stderr
    full = streamt_here("run", "-p", str(rebuilt), "-e", "local")
    assert full.returncode == 0, full.stdout + full.stderr
    got, want = _payments_rows(pay), _payments_rows(rebuilt)
    assert {k: len(v) for k, v in got.items()} == {k: len(v) for k, v in want.items()}
    assert got == want and len(got["customer_balances"]) > 0
