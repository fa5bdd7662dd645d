"""Continuous mode: long-running stream queries pick up new files, restart after failures with backoff,
report progress as Dagster observations, and stop so that the next run (available-now or continuous)
resumes without losing or repeating rows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.changes.record import readable
from dagster_streamt.dagster.code_location import code_location
from dagster_streamt.dagster.continuous_run import stream_plan as plan
from dagster_streamt.dagster.run_history import last_runs
from dagster_streamt.spark import Warehouse, register_model_view
from dagster_streamt.spark.streams.continuous import ContinuousRunner, RestartPolicy, StreamEvent, continuous_trigger
from dagster_streamt.spark.streams.stream_stats import ModelProgress

from ..conftest import write_project
from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"},
           {"name": "ts", "type": "timestamp"}, {"name": "code", "type": "string"}]
CLEAN = {"name": "orders_clean", "materialized": "stream",  # no trigger: available-now in `streamt run`
         "sql": 'SELECT order_id, amount, ts FROM {{ source("orders_raw") }} WHERE amount > 1'}
CODED = {"name": "coded", "materialized": "stream", "advanced": {"spark": {"trigger": "1 second"}},
         "sql": 'SELECT order_id, CAST(code AS INT) AS code FROM {{ source("orders_raw") }}'}
BIG = {"name": "big_orders", "materialized": "table",
       "sql": 'SELECT order_id FROM {{ ref("orders_clean") }} WHERE amount > 3'}


def config(models: list[dict[str, Any]], event_time: dict[str, str] | None = None) -> dict[str, Any]:
    source: dict[str, Any] = {"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS}
    if event_time:
        source["event_time"] = event_time
    return {"sources": [source], "models": models}


def orders(ids: range, code: str = "1") -> str:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return jsonl({"order_id": i, "amount": float(i), "ts": now, "code": code} for i in ids)


def drop(root: Path, name: str, text: str) -> None:
    """Land a file atomically (Spark ignores dot files), as a real producer must: a half-written file
    listed by the stream would be read as it was at that moment."""
    tmp = root / "landing" / f".{name}.tmp"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(text)
    os.replace(tmp, root / "landing" / name)


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 45.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.4)  # each check may be a Spark job: leave the cores to the query under test
    raise AssertionError(f"timed out waiting for {what}")


def ids(spark: Any, project: Any, model: str = "orders_clean", column: str = "order_id") -> list[int]:
    """The model's committed output (empty before its first batch has committed)."""
    data = Warehouse.for_project(project).data_dir(model)
    log = data / "_delta_log"
    if not log.is_dir() or not any(f.name.endswith(".json") for f in log.iterdir()):
        return []
    return sorted(r[column] for r in rows(spark, data))


class Recorder:
    def __init__(self) -> None:
        self.events: list[StreamEvent] = []
        self.progress: list[ModelProgress] = []

    def kinds(self, kind: str, model: str | None = None) -> list[StreamEvent]:
        return [e for e in self.events if e.kind == kind and model in (None, e.model)]


@contextmanager
def running(spark: Any, project: Any, models: list[str], rec: Recorder | None = None,
            **kwargs: Any) -> Iterator[tuple[ContinuousRunner, dict[str, StreamEvent]]]:
    """A ContinuousRunner in a thread; stopped (gracefully) and joined on exit. The dict it yields
    holds run()'s result once the block ends."""
    rec = rec or Recorder()
    kwargs.setdefault("on_event", rec.events.append)
    kwargs.setdefault("on_progress", rec.progress.append)
    runner = ContinuousRunner(spark, project, models, report_every_s=0.5, default_trigger="1 second", **kwargs)
    result: dict[str, StreamEvent] = {}
    thread = threading.Thread(target=lambda: result.update(runner.run()), daemon=True)
    thread.start()
    try:
        yield runner, result
    finally:
        runner.stop()
        thread.join(60)
        assert not thread.is_alive(), "runner did not stop"


def test_picks_up_new_files_and_resumes_after_stop(spark: Any, tmp_project: Any) -> None:
    project = tmp_project(config([CLEAN, BIG]), {"landing/a.json": orders(range(1, 6))})
    rec = Recorder()
    with running(spark, project, ["orders_clean"], rec) as (_, result):
        wait_for(lambda: ids(spark, project) == [2, 3, 4, 5], "the first file")
        # registered while running: batch models downstream read the committed output
        assert spark.table(register_model_view(spark, project, "orders_clean")).count() == 4
        big = run(spark, project, ["big_orders"])["big_orders"]
        assert big.ok and big.rows_written == 2, big.error
        drop(project.root, "b.json", orders(range(6, 9)))
        wait_for(lambda: ids(spark, project) == list(range(2, 9)), "a file added while running")
    stopped = result["orders_clean"]
    assert stopped.kind == "stopped" and stopped.totals is not None
    assert (stopped.totals.rows_written, stopped.totals.input_rows) == (7, 8)
    assert [e.kind for e in rec.events] == ["started", "stopped"]
    assert any(p.new_rows for p in rec.progress) and all(p.running for p in rec.progress)

    drop(project.root, "c.json", orders(range(9, 11)))  # lands while nothing runs
    again = run(spark, project, ["orders_clean"])["orders_clean"]  # available-now resumes the checkpoint
    assert again.ok and (again.input_rows, again.rows_written) == (2, 2), again.error
    assert ids(spark, project) == list(range(2, 11))

    with running(spark, project, ["orders_clean"]) as (_, result):
        drop(project.root, "d.json", orders(range(11, 13)))
        wait_for(lambda: ids(spark, project) == list(range(2, 13)), "the second continuous run")
    assert result["orders_clean"].totals.rows_written == 2  # type: ignore[union-attr]
    assert ids(spark, project) == list(range(2, 13)), "every row exactly once"


def test_failed_query_restarts_with_backoff(spark: Any, tmp_project: Any) -> None:
    project = tmp_project(config([CODED]), {"landing/a.json": orders(range(1, 3))})
    rec = Recorder()
    policy = RestartPolicy(initial_s=0.2, max_s=0.8)
    with running(spark, project, ["coded"], rec, policy=policy) as (_, result):
        wait_for(lambda: ids(spark, project, "coded") == [1, 2], "the first file")
        drop(project.root, "bad.json", orders(range(3, 4), code="x"))  # CAST('x' AS INT) fails (ANSI)
        wait_for(lambda: len(rec.kinds("failed")) >= 3, "three failures")
        failures = rec.kinds("failed")
        assert [e.delay_s for e in failures[:3]] == [0.2, 0.4, 0.8]
        assert all("coded" in e.message and "\n" not in e.message for e in failures)
        assert "'x'" in failures[0].message, failures[0].message
        drop(project.root, "bad.json", orders(range(3, 4), code="3"))  # the producer fixes the file
        wait_for(lambda: ids(spark, project, "coded") == [1, 2, 3], "recovery after the fix")
    assert result["coded"].kind == "stopped" and result["coded"].totals.restarts >= 3  # type: ignore[union-attr]
    assert sorted(r["code"] for r in rows(spark, Warehouse.for_project(project).data_dir("coded"))) == [1, 1, 3]


def test_gives_up_after_max_restarts_and_skips_downstream(spark: Any, tmp_project: Any) -> None:
    broken = {"name": "broken", "materialized": "stream", "sql": 'SELECT nope FROM {{ source("orders_raw") }}'}
    after = {"name": "after_broken", "materialized": "stream", "sql": 'SELECT * FROM {{ ref("broken") }}'}
    project = tmp_project(config([CODED, broken, after]), {"landing/a.json": orders(range(1, 2), code="x")})
    rec = Recorder()
    runner = ContinuousRunner(spark, project, ["coded", "broken", "after_broken"],
                              upstream={"after_broken": {"broken"}}, on_event=rec.events.append,
                              policy=RestartPolicy(initial_s=0.1, max_restarts=1))
    result = runner.run()  # returns by itself: nothing is left running
    assert result["coded"].kind == "gave_up" and "1 restart(s) failed" in result["coded"].message
    assert len(rec.kinds("failed", "coded")) == 1 and rec.kinds("started", "coded")[-1].attempt == 2
    assert result["broken"].kind == "failed" and "nope" in result["broken"].message
    assert result["after_broken"].kind == "skipped" and "broken failed to start" in result["after_broken"].message


def test_progress_becomes_dagster_events_status_reads(spark: Any, tmp_project: Any, tmp_path: Path) -> None:
    """The continuous job's reports as `streamt status` reads them: RUNNING while it runs, the rows once
    stopped; a batch carries the watermark and its lag (now - watermark)."""
    from ..dagster.test_continuous_job import materializations, run_until

    clean = {**CLEAN, "advanced": {"spark": {"trigger": "1 second"}}}
    project = tmp_project(config([clean], event_time={"column": "ts", "watermark": "1 minute"}),
                          {"landing/a.json": orders(range(1, 4))})
    loaded = load(project.root)
    location = code_location(loaded)
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        def steps(run_id: str) -> None:
            wait_for(lambda: ids(spark, project) == [2, 3], "the first file", timeout=120)
            wait_for(lambda: last_runs(loaded, instance, location.keys).get("orders_clean"), "the first report",
                     timeout=120)
            assert last_runs(loaded, instance, location.keys)["orders_clean"].status == "RUNNING"  # `status`
            drop(project.root, "b.json", orders(range(4, 6)))  # its batch reports the first batch's watermark
            wait_for(lambda: any(m.get("last_watermark") and m["new_rows"]
                                 for m in materializations(instance, run_id, "orders_clean")), "a watermark",
                     timeout=120)

        run, failures = run_until(location.defs.resolve_job_def("spark_test_continuous"), instance, steps,
                                  {"ops": {"spark_test_streams": {"config": {"report_every_s": 0.5}}}})
        assert not failures, failures
        stopped = last_runs(loaded, instance, location.keys)["orders_clean"]
        assert (stopped.status, stopped.rows) == ("COMPLETE", 4)
        batches = materializations(instance, run.run_id, "orders_clean")
    with_rows = next(m for m in batches if m.get("new_rows") and m.get("last_watermark"))
    assert with_rows["rows_written"] == 4 and with_rows["streamt/mode"] == "continuous"
    assert with_rows["last_watermark"].startswith(time.strftime("%Y-%m-%d", time.gmtime()))
    assert 60 <= with_rows["lag_s"] < 600  # now - watermark: the 1 minute delay plus the test's age
    assert with_rows["trigger"] == "1 second" and with_rows["keeping_up"] is True


def test_triggers_and_selection_plan(tmp_path: Path) -> None:
    assert continuous_trigger("30 seconds", "m") == {"processingTime": "30 seconds"}
    assert continuous_trigger(None, "m") == {"processingTime": "5 seconds"}
    assert continuous_trigger("available_now", "m", "2 seconds") == {"processingTime": "2 seconds"}
    dim = {"name": "dim", "materialized": "table", "sql": "SELECT 1 AS order_id"}
    joined = {"name": "joined", "materialized": "stream",
              "sql": 'SELECT c.* FROM {{ ref("orders_clean") }} c JOIN {{ ref("dim") }} d USING (order_id)'}
    sink = {"name": "out", "materialized": "sink", "sink": {"format": "json", "path": "out"},
            "sql": 'SELECT * FROM {{ ref("orders_clean") }}'}
    root = write_project(tmp_path / "p", config([CLEAN, dim, joined, BIG, sink]), {"landing/a.json": ""})
    loaded = load(root, use_cache=False)
    names = [i.split(".", 1)[1] for i in loaded.graph.topological_order(loaded.graph.of_type("model"))]
    streams, first, skipped = plan(loaded, names)
    assert sorted(streams) == ["joined", "orders_clean"] and first == ["dim"]
    assert dict(skipped) == {
        "big_orders": "a table, not upstream of a stream: refresh it with `streamt run`, a schedule or a sensor",
        "out": "a sink: continuous mode runs stream models; run it with `streamt run`"}


def test_cli_stops_gracefully_on_sigterm_to_its_process_group(spark: Any, tmp_path: Path) -> None:
    clean = {**CLEAN, "advanced": {"spark": {"trigger": "1 second"}}}
    root = write_project(tmp_path / "cli", config([clean, BIG]), {"landing/a.json": orders(range(1, 4))})
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    proc = subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "--continuous", "-p", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: [lines.append(line) for line in proc.stdout or []], daemon=True)
    reader.start()
    project = load(root, use_cache=False).project
    try:
        wait_for(lambda: (Warehouse.for_project(project).data_dir("orders_clean") / "_delta_log" /
                          "00000000000000000000.json").exists(),
                 "the first micro-batch of the CLI run", timeout=90)
        wait_for(lambda: any("▶ orders_clean" in line for line in lines), "the started line")
        os.killpg(proc.pid, signal.SIGTERM)  # the whole group, JVM included, as systemd or `timeout` do
        proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join(10)
    out = "".join(lines)
    assert proc.returncode == 0, out
    assert "big_orders" in out and "skipped: a table, not upstream of a stream" in out
    assert "interrupted: stopping the queries gracefully" in out and "Traceback" not in out
    assert "stopped: 2 rows in 1 batch(es), 0 restart(s)" in out, out
    assert ids(spark, project) == [2, 3]
    instance = dg.DagsterInstance.from_config(str(root / ".streamt" / "dagster"))
    statuses = [r.asset_observation.metadata["streamt/status"].value
                for r in instance.fetch_observations(dg.AssetKey(["orders_clean"]), limit=10).records]
    assert statuses[0] == "stopped" and "running" in statuses


def test_the_job_runs_the_tables_its_streams_read_first(spark: Any, tmp_project: Any, tmp_path: Path) -> None:
    """Launched with no config, the continuous job brings the table a stream joins up to date once (with the
    definition record a models run leaves), then keeps both streams running."""
    from ..dagster.test_continuous_job import materializations, run_until

    fast = {"advanced": {"spark": {"trigger": "1 second"}}}
    dim = {"name": "dim", "materialized": "table", "sql": "SELECT CAST(2 AS BIGINT) AS order_id"}
    joined = {"name": "joined", "materialized": "stream", **fast,
              "sql": 'SELECT c.order_id, c.amount FROM {{ ref("orders_clean") }} c JOIN {{ ref("dim") }} d '
                     'USING (order_id)'}
    project = tmp_project(config([{**CLEAN, **fast}, dim, joined]), {"landing/a.json": orders(range(1, 4))})
    location = code_location(load(project.root))
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        def steps(run_id: str) -> None:
            wait_for(lambda: ids(spark, project, "joined") == [2], "the joined stream", timeout=120)

        run, failures = run_until(location.defs.resolve_job_def("spark_test_continuous"), instance, steps,
                                  {"ops": {"spark_test_streams": {"config": {"report_every_s": 0.5}}}})
        assert not failures, failures
        assert run.status == dg.DagsterRunStatus.CANCELED
        [first] = materializations(instance, run.run_id, "dim")
        assert first["streamt/definition"]["project"] == "spark_test" and first["materialized"] == "table"
        assert readable(first["streamt/definition"])  # what `streamt plan` compares the next run with
    assert ids(spark, project, "joined") == [2] and ids(spark, project) == [2, 3]
