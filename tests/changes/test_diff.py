"""`streamt diff --base REF`: each model classed between two git revisions, on the example and on streamt's
own payments example, each edited the ways a change gate must tell apart; the downstream set is the lineage
walk's; exit codes as documented. No JVM: the CLI in this process (click's runner), one real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dagster_streamt.api import load
from dagster_streamt.cli.main import cli

from ..helpers import EXAMPLE, REPO, streamt

PAYMENTS = REPO / "tests" / "compat" / "streamt_projects" / "payments_example"
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


def _repo(root: Path, project: Path) -> Path:
    """``project``'s YAML (no data, no state) committed in a new git repository; the project's folder."""
    folder = root / "repo" / "project"
    shutil.copytree(project, folder, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    subprocess.run(["git", "init", "-q"], cwd=root / "repo", check=True)
    _commit(folder, "base")
    return folder


def _commit(folder: Path, message: str) -> None:
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", message], cwd=folder, check=True)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def _diff(folder: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Exit code, the JSON document, and stderr."""
    result = CliRunner().invoke(cli, ["diff", "-p", str(folder), "--base", "HEAD", "--format", "json", *args])
    assert "Traceback" not in result.output, result.output
    doc = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    return result.exit_code, doc, result.stderr


def _by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in doc["changes"]}


def _classes(doc: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["change"] for c in doc["changes"] if c["change"] != "unchanged"}


def _refreshed(doc: dict[str, Any]) -> list[str]:
    return sorted(c["name"] for c in doc["changes"] if c["refresh"] == "full")


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return _repo(tmp_path, EXAMPLE)


def test_nothing_changed_and_a_reformatted_query_is_unchanged(shop: Path) -> None:
    code, doc, _ = _diff(shop)
    assert code == 0 and _classes(doc) == {} and doc["order"] == [] and doc["counts"] == {"unchanged": 8}
    # the same query written differently (layout, keyword case) is the same tree
    _edit(shop / "models/marts/customer_orders.yml", "      FROM {{ source(\"customers\") }} AS c\n",
          "      from   {{ source(\"customers\") }}   as c\n")
    code, doc, _ = _diff(shop)
    assert code == 0 and _classes(doc) == {}


def test_a_description_is_metadata_and_refreshes_nothing(shop: Path) -> None:
    _edit(shop / "models/marts/customer_orders.yml", "One row per customer", "Each customer")
    code, doc, _ = _diff(shop)
    assert code == 0 and _classes(doc) == {"customer_orders": "metadata"}
    assert _by_name(doc)["customer_orders"]["reasons"] == ["description changed"]
    assert _refreshed(doc) == [] and doc["order"] == []


def test_an_added_column_rebuilds_the_model_only(shop: Path) -> None:
    _edit(shop / "models/marts/customer_orders.yml", "        c.country,\n",
          "        c.country,\n        min(o.ts) AS first_order_at,\n")
    code, doc, _ = _diff(shop, "--fail-on", "breaking")
    assert code == 0 and _classes(doc) == {"customer_orders": "non_breaking"}
    assert _by_name(doc)["customer_orders"]["reasons"] == ["column first_order_at added"]
    assert doc["order"] == ["customer_orders"]


def test_a_removed_column_names_its_readers_and_rebuilds_only_them(shop: Path) -> None:
    _edit(shop / "models/staging/orders_clean.yml", "        customer_id,\n", "")
    code, doc, err = _diff(shop)
    clean = _by_name(doc)["orders_clean"]
    assert clean["change"] == "breaking" and clean["reasons"] == ["column customer_id removed"]
    assert clean["columns"] == ["customer_orders (join on customer_id)", "daily_revenue (join on customer_id)",
                                "high_value_orders.customer_id", "orders_export.customer_id"]
    # order_metrics reads no customer_id: its rows stay as they are
    assert doc["order"] == ["orders_clean", "customer_orders", "daily_revenue", "high_value_orders", "orders_export"]
    # what the removal broke: the tests still naming the column; exit 1 after the diff
    assert code == 1 and "has 4 error(s)" in err and "TST008" in err and "customer_id" in err


def test_a_changed_filter_reaches_everything_downstream_as_lineage_does(shop: Path) -> None:
    _edit(shop / "models/staging/orders_clean.yml", "AND amount > ", "AND amount >= ")
    code, doc, _ = _diff(shop)
    clean = _by_name(doc)["orders_clean"]
    assert code == 0 and _classes(doc) == {"orders_clean": "breaking"}
    assert clean["reasons"] == ["filter: NOT order_id IS NULL AND amount > 0 -> "
                                "NOT order_id IS NULL AND amount >= 0"]
    graph = load(shop).graph
    walk = sorted(n for n in graph.downstream("model.orders_clean") if graph.nodes[n].type != "test")
    assert clean["affected"] == walk
    assert _refreshed(doc) == sorted(["orders_clean", *(n.split(".", 1)[1] for n in walk if n.startswith("model."))])
    assert clean["exposures"] == ["exposure.billing_service", "exposure.ops_dashboard"]
    assert set(clean["owners"]) >= {"billing-team", "ops"}
    assert _by_name(doc)["order_metrics"]["reasons"] == ["upstream orders_clean changed (breaking)"]


def test_a_changed_window_is_state_incompatible_and_trips_the_gate(shop: Path) -> None:
    _edit(shop / "models/marts/order_metrics.yml", "window(ts, '1 hour')", "window(ts, '2 hours')")
    code, doc, err = _diff(shop, "--fail-on", "breaking")
    metrics = _by_name(doc)["order_metrics"]
    assert _classes(doc) == {"order_metrics": "state_incompatible"} and doc["worst"] == "state_incompatible"
    assert metrics["reasons"][0] == "group keys: WINDOW(ts, '1 hour') -> WINDOW(ts, '2 hours')"
    assert "new checkpoint and a full refresh" in metrics["reasons"][-1]
    assert metrics["exposures"] == ["exposure.ops_dashboard"] and metrics["owners"] == ["ops"]
    assert code == 3 and "order_metrics (state_incompatible)" in err
    assert _diff(shop, "--fail-on", "destructive")[0] == 0


def test_a_renamed_and_a_deleted_model_are_destructive(shop: Path) -> None:
    _edit(shop / "models/marts/order_metrics.yml", "name: order_metrics", "name: order_metrics_hourly")
    code, doc, err = _diff(shop)
    assert _classes(doc) == {"order_metrics": "destructive", "order_metrics_hourly": "new"}
    assert _by_name(doc)["order_metrics"]["reasons"][0].startswith("renamed to order_metrics_hourly")
    assert _by_name(doc)["order_metrics_hourly"]["reasons"] == ["renamed from order_metrics"]
    assert code == 1 and "REF004" in err  # the exposure still consumes the old name
    (shop / "models/marts/order_metrics.yml").unlink()
    code, doc, _ = _diff(shop)
    gone = _by_name(doc)["order_metrics"]
    assert _classes(doc) == {"order_metrics": "destructive"} and gone["reasons"][0].startswith("model removed")
    assert gone["exposures"] == ["exposure.ops_dashboard"]


def test_streamt_payments_example(tmp_path: Path) -> None:
    pay = _repo(tmp_path, PAYMENTS)
    root = pay / "stream_project.yml"
    _edit(root, "INTERVAL '5' MINUTE", "INTERVAL '10' MINUTE")
    code, doc, _ = _diff(pay)
    balances = _by_name(doc)["customer_balances"]
    assert code == 0 and _classes(doc) == {"customer_balances": "state_incompatible"}
    assert balances["exposures"] == ["exposure.billing_service"] and balances["owners"] == ["billing-team@example.com"]
    subprocess.run(["git", "checkout", "-q", "."], cwd=pay, check=True)
    _edit(root, "WHERE status IS NOT NULL", "WHERE status IS NOT NULL AND amount > 0")
    _edit(root, "Cleaned and validated payment events", "Cleaned payment events")
    code, doc, _ = _diff(pay)
    clean = _by_name(doc)["payments_clean"]
    assert _classes(doc) == {"payments_clean": "breaking"} and doc["order"] == ["payments_clean", "customer_balances"]
    assert clean["reasons"][-1] == "description changed"
    subprocess.run(["git", "checkout", "-q", "."], cwd=pay, check=True)
    _edit(root, "        event_timestamp\n      FROM", "        event_timestamp,\n        merchant_id\n      FROM")
    code, doc, _ = _diff(pay)
    assert _classes(doc) == {"payments_clean": "non_breaking"} and doc["order"] == ["payments_clean"]
    subprocess.run(["git", "checkout", "-q", "."], cwd=pay, check=True)
    _edit(root, "        currency,\n", "")  # read by nobody downstream: only the model rebuilds
    code, doc, _ = _diff(pay)
    assert _classes(doc) == {"payments_clean": "breaking"} and doc["order"] == ["payments_clean"]
    assert _by_name(doc)["payments_clean"]["reasons"] == ["column currency removed"]
    subprocess.run(["git", "checkout", "-q", "."], cwd=pay, check=True)
    _edit(root, "        amount,\n", "")  # summed by customer_balances
    code, doc, err = _diff(pay)
    assert _by_name(doc)["payments_clean"]["columns"] == ["customer_balances.total_amount"]
    assert doc["order"] == ["payments_clean", "customer_balances"] and code == 1 and "amount" in err
    subprocess.run(["git", "checkout", "-q", "."], cwd=pay, check=True)
    _edit(root, "name: customer_balances", "name: customer_totals")
    _edit(root, "ref: customer_balances", "ref: customer_totals")
    code, doc, _ = _diff(pay)
    assert code == 0 and _classes(doc) == {"customer_balances": "destructive", "customer_totals": "new"}
    assert _by_name(doc)["customer_balances"]["exposures"] == ["exposure.billing_service"]
    subprocess.run(["git", "checkout", "-q", "."], cwd=pay, check=True)
    text = root.read_text()
    root.write_text(text[:text.index("  - name: customer_balances")] + text[text.index("tests:"):]
                    .replace("    consumes:\n      - ref: customer_balances\n", "    consumes: []\n"))
    code, doc, _ = _diff(pay, "--fail-on", "destructive")
    assert code == 3 and _classes(doc) == {"customer_balances": "destructive"}
    subprocess.run(["git", "checkout", "-q", "."], cwd=pay, check=True)
    _edit(root, "topic: payments.raw.v1", "topic: payments.raw.v2")
    code, doc, _ = _diff(pay)
    assert _classes(doc) == {"payments_raw": "breaking"} and _by_name(doc)["payments_raw"]["kind"] == "source"
    assert _by_name(doc)["payments_raw"]["reasons"] == ["topic changed"]
    assert doc["order"] == ["payments_clean", "customer_balances"]


def test_two_revisions_and_a_revision_before_the_project(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "other").mkdir(parents=True)
    (repo / "other" / "README").write_text("before the project\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    _commit(repo, "no project yet")
    folder = repo / "project"
    shutil.copytree(PAYMENTS, folder)
    _commit(folder, "the project")
    code, doc, _ = _diff(folder, "--base", "HEAD~1")
    assert code == 0 and _classes(doc) == {"customer_balances": "new", "payments_clean": "new", "payments_raw": "new"}
    _edit(folder / "stream_project.yml", "Raw payment events", "Raw payments")
    _commit(folder, "a description")
    folder.joinpath("stream_project.yml").write_text("not: [a project")  # the working tree is not read
    result = CliRunner().invoke(cli, ["diff", "-p", str(folder), "--base", "HEAD~1", "--head", "HEAD",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _classes(json.loads(result.stdout)) == {"payments_raw": "metadata"}


def test_bad_revisions_are_one_clear_line(tmp_path: Path, shop: Path) -> None:
    code, _, err = _diff(shop, "--base", "nope")
    assert code == 1 and "error: no revision 'nope' in" in err
    plain = tmp_path / "plain"
    shutil.copytree(PAYMENTS, plain)
    code, _, err = _diff(plain)
    assert code == 1 and "is not in a git repository" in err
    # the real entry point: text output, the gate's exit code
    _edit(shop / "models/staging/orders_clean.yml", "AND amount > ", "AND amount >= ")
    done = streamt("diff", "-p", str(shop), "--base", "HEAD", "--fail-on", "breaking")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "model orders_clean" in done.stdout and "breaking" in done.stdout
    assert "refresh order: orders_clean -> customer_orders -> daily_revenue" in done.stdout
    assert "✗ 1 change(s) at breaking or worse: orders_clean (breaking)" in done.stderr
