"""The example pipeline end to end through Dagster on real Spark: whole run, tables read back and
checked against the generated files, incremental rerun, subset, a failing model, `streamt run`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.resources import SparkResource
from dagster_streamt.spark import Warehouse, read_quarantine

from ..conftest import StreamtHere
from ..helpers import write_project

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.spark


def generate(project: Path, *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / "project" / "generate.py"), "--out", str(project / "data"), *args],
                   check=True, capture_output=True)


def _parsed(line: str) -> dict[str, Any] | None:
    try:
        return dict(json.loads(line))
    except ValueError:
        return None


def expected_orders(project: Path) -> tuple[list[dict[str, Any]], int]:
    """(valid order rows as the SQL keeps them, malformed line count), computed in plain Python."""
    valid, bad = [], 0
    for f in sorted((project / "data" / "orders").glob("*.json")):
        for line in f.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if rec.get("order_id") is not None and rec.get("amount") is not None and rec["amount"] > 0:
                valid.append(rec)
    return valid, bad


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("e2e") / "shop"
    shutil.copytree(ROOT / "project", dst, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    generate(dst, "--orders", "3000", "--customers", "150")
    return dst


def materialize(project: Path, names: list[str] | None = None, tags: dict[str, str] | None = None
                ) -> dg.ExecuteInProcessResult:
    defs = build_definitions(project, spark=SparkResource(project_dir=str(project), keep_alive=True))
    job = defs.resolve_implicit_global_asset_job_def()
    loaded = load(project)
    unpartitioned = [n for n in sorted(loaded.compiled.models) if loaded.project.models[n].partitioned_by is None]
    keys = [dg.AssetKey([n]) for n in (names or unpartitioned)]
    return job.execute_in_process(instance=dg.DagsterInstance.ephemeral(), asset_selection=keys,
                                  raise_on_error=False, tags=tags or {})


def materialized(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    return {e.asset_key.to_user_string(): {k: v.value for k, v in e.materialization.metadata.items()}
            for e in result.get_asset_materialization_events()}


def table(spark: Any, project: Path, name: str) -> list[dict[str, Any]]:
    location = Warehouse.for_project(load(project).project).table_location(name)
    assert location is not None, f"{name} has no table"
    return [r.asDict() for r in spark.read.format("delta").load(str(location)).collect()]


def test_whole_pipeline_then_incremental(spark: Any, shop: Path) -> None:
    result = materialize(shop)
    assert result.success
    mats = materialized(result)
    # the models, and the sources' new data reported as their updates
    assert sorted(mats) == ["customer_orders", "high_value_orders", "order_metrics", "orders_clean", "orders_export",
                            "sources/customers", "sources/orders_raw"]
    assert mats["sources/orders_raw"]["files"] == len(list((shop / "data" / "orders").glob("*.json")))

    valid, bad = expected_orders(shop)
    clean = table(spark, shop, "orders_clean")
    assert len(clean) == len(valid) == mats["orders_clean"]["dagster/row_count"]
    assert sorted(r["order_id"] for r in clean) == sorted(r["order_id"] for r in valid)
    assert {r["status"] for r in clean} <= {"placed", "paid", "shipped", "cancelled"}  # normalised
    assert mats["orders_clean"]["quarantined_rows"] == bad > 0
    project = load(shop).project
    assert read_quarantine(spark, Warehouse.for_project(project), "orders_raw").count() == bad

    customers = table(spark, shop, "customer_orders")
    assert len(customers) == 150
    spent = {r["customer_id"]: r["total_spent"] for r in customers}
    for cid in (1, 77, 150):
        assert spent[cid] == pytest.approx(sum(r["amount"] for r in valid if r["customer_id"] == cid))

    metrics = table(spark, shop, "order_metrics")
    watermark = max(datetime.fromisoformat(r["ts"]) for r in valid) - timedelta(minutes=10)
    closed = [r for r in valid if datetime.fromisoformat(r["ts"]).replace(minute=0, second=0)
              + timedelta(hours=1) <= watermark]
    assert sum(m["order_count"] for m in metrics) == len(closed)

    exported = spark.read.parquet(str(shop / "exports" / "orders")).count()
    assert exported == len(valid)

    # the example's tests ran as asset checks: the warn one catches the feed's null buyers
    evals = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
             for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}
    assert sorted(evals) == ["customer_orders_unique", "orders_clean_customer_known", "orders_clean_live",
                             "orders_clean_quality", "orders_clean_schema", "orders_raw_unique_events"]
    # the source's test ran before the models read it: the feed delivers some orders twice (a warning)
    twice = evals["orders_raw_unique_events"]
    ids = [rec["order_id"] for f in sorted((shop / "data" / "orders").glob("*.json"))
           for rec in map(_parsed, f.read_text().splitlines()) if rec and rec.get("order_id") is not None]
    assert not twice.passed and twice.severity == dg.AssetCheckSeverity.WARN
    assert twice.asset_key == dg.AssetKey(["sources", "orders_raw"])
    assert twice.metadata["failing_rows"].value == len(ids) - len(set(ids)) > 0
    assert evals["orders_clean_quality"].passed and evals["customer_orders_unique"].passed
    known = evals["orders_clean_customer_known"]
    assert not known.passed and known.severity == dg.AssetCheckSeverity.WARN
    nulls = sum(1 for r in valid if r["customer_id"] is None)
    assert known.metadata["failing_rows"].value == nulls > 0
    live = evals["orders_clean_live"]  # the continuous test saw every micro-batch of the stream
    assert not live.passed and live.metadata["failing_rows"].value == nulls
    from dagster_streamt.checks.violation_store import read_violations

    stored = read_violations(spark, load(shop).project, "orders_clean", result.run_id)
    rows = stored.collect()
    assert len(rows) == nulls and {(r["assertion"], r["violation"]) for r in rows} == {("not_null", "null_value")}

    # incremental: a new file arrives; the stream models process only it, nothing twice
    generate(shop, "--orders", "400", "--customers", "150", "--append")
    again = materialize(shop, ["orders_clean", "orders_export"])
    assert again.success
    valid2, bad2 = expected_orders(shop)
    new_rows = len(valid2) - len(valid)
    clean_md = materialized(again)["orders_clean"]  # this run's rows; the stored output's size
    assert clean_md["rows_written"] == new_rows > 0 and clean_md["dagster/row_count"] == len(valid2)
    # the continuous test judged the new rows only, and says so; the null buyers it found before are still in
    # the table, so it does not turn green
    live2 = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
             for e in again.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}["orders_clean_live"]
    nulls2 = sum(1 for r in valid2 if r["customer_id"] is None)
    assert not live2.passed and live2.metadata["failing_rows"].value == nulls2
    assert live2.metadata["checked"].value == (f"{new_rows} row(s) added since the last run; {nulls} violation(s) "
                                               "from earlier runs still in the table")
    assert len(table(spark, shop, "orders_clean")) == len(valid2)
    assert spark.read.parquet(str(shop / "exports" / "orders")).count() == len(valid2)
    assert read_quarantine(spark, Warehouse.for_project(project), "orders_raw").count() == bad2

    # a subset run reads its upstream table from the warehouse
    only = materialize(shop, ["customer_orders"])
    # (each run here has an instance of its own: the source it reads is new data to it)
    assert only.success and sorted(materialized(only)) == ["customer_orders", "sources/customers"]


def test_failing_model_skips_exactly_its_downstream(spark: Any, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "sources/s.yml": """\
            sources:
              - name: events
                format: json
                path: data
                columns: [{name: id, type: bigint}, {name: v, type: double}]
            """,
        "models/m.yml": """\
            models:
              - name: a
                sql: SELECT id, v FROM {{ source("events") }}
              - name: broken
                sql: SELECT id, no_such_column FROM {{ ref("a") }}
              - name: after_broken
                sql: SELECT id FROM {{ ref("broken") }}
              - name: fine
                sql: SELECT id, v * 2 AS v2 FROM {{ ref("a") }}
            """,
    })
    (root / "data").mkdir()
    (root / "data" / "e.json").write_text('{"id": 1, "v": 1.5}\n{"id": 2, "v": 2.5}\n')
    result = materialize(root)
    assert not result.success
    assert sorted(materialized(result)) == ["a", "fine", "sources/events"]
    assert sorted(r["v2"] for r in table(spark, root, "fine")) == [3.0, 5.0]
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "broken" in failure.event_specific_data.error.message
    # the CLI says the same in plain words: no Dagster class path, no traceback, exit 1
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root)],
                       capture_output=True, text=True, timeout=600,
                       env={**__import__("os").environ, "DAGSTER_HOME": ""})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "error: 1 model(s) failed: broken" in r.stderr, r.stderr
    assert "dagster._" not in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_streamt_run_cli_records_the_run_in_the_project_instance(shop: Path, tmp_path: Path,
                                                                 streamt_here: StreamtHere) -> None:
    copy = tmp_path / "shop"
    shutil.copytree(shop, copy, ignore=shutil.ignore_patterns(".streamt", "target", "exports"))
    r = streamt_here("run", "-p", str(copy), "-s", "+customer_orders")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2/2 model(s) succeeded" in r.stdout
    lines = [ln.split() for ln in r.stdout.splitlines()]
    row = next(ln for ln in lines if ln[:1] == ["customer_orders"] and len(ln) == 4)
    assert row[:3] == ["customer_orders", "success", "150"]
    with dg.DagsterInstance.from_config(str(copy / ".streamt" / "dagster")) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1 and runs[0].is_success
        assert runs[0].tags["streamt/command"] == "run"
    assert "openlineage: " in r.stdout and " 0 pending" in r.stdout

    def cli(*args: str) -> str:
        out = streamt_here(*args, "-p", str(copy))
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    # run-aware lineage: each node's last run from the project's Dagster instance
    text = cli("lineage", "-m", "customer_orders", "--upstream", "--runs")
    line = next(ln for ln in text.splitlines() if "orders_clean (stream)" in ln)
    assert "COMPLETE" in line and " rows" in line and " s " in line
    assert "Last run: COMPLETE  started " in text
    assert "high_value_orders" not in text
    status = {ln.split()[0]: ln.split() for ln in cli("status").splitlines()[1:] if ln.strip()}
    assert status["customer_orders"][1:3] == ["table", "COMPLETE"] and status["customer_orders"][5] == "150"
    assert status["order_metrics"][2:4] == ["never", "run"]
    # observed vs parsed: our own events match the graph; a foreign read shows up
    events = copy / ".streamt" / "openlineage.jsonl"
    assert "Observed at run time but not declared in the project:\n  (none)" in cli("lineage", "--observed",
                                                                                      str(events))
    foreign = json.loads(next(ln for ln in events.read_text().splitlines()
                              if '"shop.customer_orders"' in ln and '"COMPLETE"' in ln))
    foreign["inputs"].append({"namespace": "postgres://crm:5432", "name": "crm.public.vip_list"})
    extra = tmp_path / "foreign.jsonl"
    extra.write_text(json.dumps(foreign) + "\nnot json\n")
    diff = json.loads(cli("lineage", "--observed", str(extra), "--format", "json"))
    assert diff["observed_only"] == [["external:postgres://crm:5432/crm.public.vip_list", "model.customer_orders"]]
    assert diff["bad_lines"] == [2]
    # --full-refresh travels as the run's typed config (the launchpad shows it), and the table starts over
    again = streamt_here("run", "-p", str(copy), "-s", "customer_orders", "--full-refresh", "customer_orders")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "(rebuilt: full refresh requested)" in again.stdout, again.stdout
    with dg.DagsterInstance.from_config(str(copy / ".streamt" / "dagster")) as instance:
        last = instance.get_runs(limit=1)[0]
        assert last.run_config["resources"] == {"run_options": {"config": {"full_refresh": ["customer_orders"]}}}
        assert not any("full_refresh" in tag for tag in last.tags)
