"""Last runs and test results in the docs, after a real `streamt run` of the example on Spark: the
page says what `streamt status` says, read from the project's Dagster instance."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import run_here
from .conftest import ENV, EXAMPLE, copy_example
from .test_docs_generate import core

pytestmark = [pytest.mark.spark, pytest.mark.browser]


def cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def ran(shared_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    project = copy_example(tmp_path_factory.mktemp("docs_runs") / "shop")
    subprocess.run([sys.executable, str(EXAMPLE / "generate.py"), "--out", str(project / "data"), "--orders", "2000",
                    "--customers", "120"], check=True, capture_output=True, timeout=120)
    r = run_here(shared_spark, "run", "-p", str(project))
    assert "model(s) succeeded" in r.stdout, r.stdout + r.stderr
    status = cli("status", "-p", str(project), "--format", "json")
    assert status.returncode == 0, status.stdout + status.stderr
    return project, json.loads(status.stdout)


def test_last_runs_and_test_results_appear(ran: tuple[Path, dict[str, Any]], new_page: Any) -> None:
    project, status = ran
    r = cli("docs", "generate", "-p", str(project))
    assert r.returncode == 0 and "with last runs and test results" in r.stdout, r.stdout + r.stderr
    index = project / "target" / "docs" / "index.html"
    state = core(index)["state"]
    assert state["instance"] == ".streamt/dagster" and state["error"] == ""
    by_model = {m["model"]: m for m in status["models"]}
    ran_models = {m for m, row in by_model.items() if row["status"] != "never run"}
    assert {"orders_clean", "customer_orders", "order_metrics"} <= ran_models
    assert sorted(state["runs"]) == sorted(ran_models)
    for name in ran_models:
        run = state["runs"][name]
        assert (run["status"], run["finished"], run["rows"]) == (by_model[name]["status"], by_model[name]["finished"],
                                                                 by_model[name]["rows"])
    checked = {t["test"]: t for t in status["tests"] if t["at"]}
    assert checked and sorted(state["checks"]) == sorted(checked)
    assert all(state["checks"][t]["passed"] == checked[t]["passed"] for t in checked)

    p = new_page()
    page = p.open(index.as_uri() + "#model.orders_clean")
    last = page.inner_text("#last-run")
    rows = by_model["orders_clean"]["rows"]
    assert "COMPLETE" in last and f"{rows:,}" in last and by_model["orders_clean"]["finished"][:10] in last
    assert page.locator("#details h2 .badge.st-complete").count() == 1
    assert page.locator("#sidebar li[data-id='model.orders_clean'] .dot.st-complete").count() == 1
    tests = page.inner_text("#details .tests")
    for t in ("orders_clean_quality", "orders_clean_customer_known"):
        if t in checked:
            assert ("passed" if checked[t]["passed"] else "failed") in tests.split(t, 1)[1].split("\n", 1)[0]
    page.evaluate("location.hash = '#model.daily_revenue'")  # partitioned: `streamt run` leaves it out
    page.wait_for_selector("#last-run")
    assert page.inner_text("#last-run") == "never run"
    page.evaluate("location.hash = ''")
    page.wait_for_function("!location.hash")
    assert f"Last runs of {len(ran_models)} models" in page.inner_text("#details")
    p.assert_clean()
    r = cli("docs", "generate", "-p", str(project), "--no-runs")
    assert r.returncode == 0 and core(index)["state"] is None
