"""The ``<project>_continuous`` job (issue 43) on the example: started with no config, its micro-batches
reported live on the stream models' assets, its continuous test as an asset check, new files picked up
while it runs, then terminated as the UI does (the run marked canceling, SIGINT to the run's process):
the run ends CANCELED, the outputs hold every valid order once, a second run resumes with no row lost or
repeated, and the OpenLineage file holds START, RUNNING..., then COMPLETE per stream and ABORT for the run,
each event valid against the spec's schemas."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from deltalake import DeltaTable

from dagster_streamt import build_definitions, load
from dagster_streamt.dagster.key_map import KeyMap
from dagster_streamt.dagster.stream_health import stream_health
from dagster_streamt.openlineage.events import node_run_id, parent_run_id

from ..helpers import stopped_streams, streamt
from ..openlineage.spec import assert_valid

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.spark
FAST = {"ops": {"shop_streams": {"config": {"report_every_s": 1.0, "check_every_s": 2.0, "lineage_every_s": 2.0}}}}


def _generate(project: Path, *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / "project" / "generate.py"), "--out", str(project / "data"),
                    "--orders", "300", "--customers", "50", *args], check=True, capture_output=True)


def _valid_ids(project: Path) -> Counter[int]:
    """orders_clean as the files define it: well-formed lines with an id and a positive amount."""
    found: Counter[int] = Counter()
    for path in sorted((project / "data" / "orders").glob("*")):
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("order_id") is not None and (rec.get("amount") or 0) > 0:
                found[int(rec["order_id"])] += 1
    return found


def _stored_ids(project: Path) -> Counter[int]:
    table = DeltaTable(str(project / ".streamt" / "warehouse" / "orders_clean" / "data"))
    return Counter(int(i) for i in table.to_pyarrow_table(columns=["order_id"]).column("order_id").to_pylist())


def _until(cond: Any, what: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = cond()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def run_until(job: dg.JobDefinition, instance: dg.DagsterInstance, steps: Any,
               run_config: dict[str, Any] | None = None, interrupt: bool = True) -> tuple[dg.DagsterRun, list[str]]:
    """Execute the job in this process while ``steps(run_id)`` drives it from a thread, then terminate it
    as Dagster's run launcher does: mark it canceling, interrupt the process running it (unless ``steps``
    did so itself: ``interrupt=False``)."""
    failures: list[str] = []

    def drive() -> None:
        run_id = _until(lambda: next((r.run_id for r in instance.get_runs(dg.RunsFilter(
            job_name=job.name, statuses=[dg.DagsterRunStatus.STARTED]))), None), "the run to start")
        try:
            steps(run_id)
        except BaseException as exc:  # reported by the test, after the run is stopped
            failures.append(repr(exc))
        if interrupt:
            instance.report_run_canceling(instance.get_run_by_id(run_id), message="terminated by the test")
            os.kill(os.getpid(), signal.SIGINT)

    driver = threading.Thread(target=drive, daemon=True)
    driver.start()
    result = job.execute_in_process(instance=instance, run_config=run_config or FAST, raise_on_error=False)
    driver.join()
    run = instance.get_run_by_id(result.run_id)
    assert run is not None
    return run, failures


def materializations(instance: dg.DagsterInstance, run_id: str, asset: str) -> list[dict[str, Any]]:
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    out = []
    for r in records:
        mat = r.event_log_entry.asset_materialization
        if mat is not None and mat.asset_key == dg.AssetKey(asset):
            out.append({k: getattr(v, "value", v) for k, v in mat.metadata.items()})
    return out


class _Interrupter(threading.Event):
    """Once armed, on the first materialization of ``model`` Dagster writes while ``when()`` holds: SIGINT, after
    marking the run canceling as the run launcher does. The interruption lands between two of the op's steps,
    where Dagster only records it, then raises it at the op's next step without resuming (or closing) its
    generator."""

    def __init__(self, instance: dg.DagsterInstance, model: str, when: Any) -> None:
        super().__init__()
        self.armed = False
        handle = instance.handle_new_event

        def handle_new_event(event: Any, *args: Any, **kwargs: Any) -> None:
            handle(event, *args, **kwargs)
            mat = event.dagster_event.step_materialization_data.materialization \
                if event.dagster_event and event.dagster_event.is_step_materialization else None
            if self.armed and not self.is_set() and mat is not None and mat.asset_key == dg.AssetKey(model) \
                    and when():
                self.set()
                instance.report_run_canceling(instance.get_run_by_id(event.run_id), message="terminated by the test")
                signal.raise_signal(signal.SIGINT)

        instance.handle_new_event = handle_new_event  # type: ignore[method-assign]

    def arm(self) -> None:
        self.armed = True


def test_streams_run_in_dagster_report_batches_and_stop_cleanly(tmp_path: Path, spark: Any) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(ROOT / "project", shop, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    _generate(shop)
    loaded = load(shop)
    defs = build_definitions(shop, loaded=loaded)
    keys = KeyMap.from_definitions(defs, "shop")
    assert keys is not None
    job = defs.resolve_job_def("shop_continuous")
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        def first_run(run_id: str) -> None:
            _until(lambda: sum(m["rows_written"] for m in materializations(instance, run_id, "orders_clean"))
                   == sum(_valid_ids(shop).values()), "the first file's orders as materializations")
            _generate(shop, "--append")  # a new file while the stream runs: picked up without a new run
            _until(lambda: sum(m["rows_written"] for m in materializations(instance, run_id, "orders_clean")[-1:])
                   == sum(_valid_ids(shop).values()), "the appended orders")
            _until(lambda: instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
                                                        ).records, "the continuous test's verdict")
            # a stream reading a stream starts after its input's first batch: under load, seconds later
            _until(lambda: materializations(instance, run_id, "order_metrics"), "order_metrics' first batch")
            live = {h.model: h for h in stream_health(loaded, instance, keys)}["orders_clean"]
            assert (live.state, live.run_id) == ("running", run_id) and live.health in ("ok", "lagging"), live
            assert live.last_batch_id is not None and live.rows_written == sum(_valid_ids(shop).values())

        run, failures = run_until(job, instance, first_run)
        assert not failures, failures
        assert run.status == dg.DagsterRunStatus.CANCELED
        assert _stored_ids(shop) == _valid_ids(shop)  # every valid order once, the appended file included
        batches = materializations(instance, run.run_id, "orders_clean")
        assert batches and {"batch_id", "rows_written", "new_rows", "input_rows", "batch_duration_s",
                            "processed_rows_per_second", "last_watermark"} <= set(batches[-1])
        assert materializations(instance, run.run_id, "order_metrics")  # a stream reading a stream, live too
        checks = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
        assert {r.event_log_entry.dagster_event.event_specific_data.check_name for r in checks} == {"orders_clean_live"}
        assert stopped_streams(instance, run.run_id, ["orders_clean", "order_metrics"]) == {
            "orders_clean", "order_metrics"}

        # files landed while nothing runs are read by the next run, from where the first one stopped
        _generate(shop, "--append")
        caught_up: list[int] = []  # the rows stored once the resumed stream caught up

        def new_file_stored() -> bool:  # (the caught-up batch's own materialization may land after the arming)
            stored = _stored_ids(shop)
            return stored == _valid_ids(shop) and sum(stored.values()) > caught_up[0]

        fired = _Interrupter(instance, "orders_clean", new_file_stored)

        def second_run(run_id: str) -> None:
            _until(lambda: _stored_ids(shop) == _valid_ids(shop), "the resumed stream to catch up")
            caught_up.append(sum(_stored_ids(shop).values()))
            fired.arm()
            _generate(shop, "--append")  # its batch's materialization is where the interruption lands
            _until(fired.is_set, "the interruption")

        again, failures = run_until(job, instance, second_run, interrupt=False)
        assert not failures, failures
        assert again.status == dg.DagsterRunStatus.CANCELED
        # Dagster raised the interruption outside the op's generator (at its next step), leaving it suspended:
        # the resource's teardown still stopped the queries gracefully before the run returned
        assert not spark.streams.active
        assert _stored_ids(shop) == _valid_ids(shop)  # nothing lost, nothing read twice

        seen = streamt("observe", "-p", str(shop), "--format", "json")  # the CLI, on the same instance
        assert seen.returncode == 0, seen.stdout + seen.stderr
        assert {h["model"]: (h["state"], h["health"], h["run_id"]) for h in json.loads(seen.stdout)["streams"]} == {
            "orders_clean": ("stopped", "stopped", again.run_id), "order_metrics": ("stopped", "stopped", again.run_id)}

    events = [json.loads(line) for line in (shop / ".streamt" / "openlineage.jsonl").read_text().splitlines()]
    assert_valid(events)
    mine = [e for e in events if e["run"]["runId"] == parent_run_id(run.run_id)]
    kinds = [e["eventType"] for e in mine]
    assert kinds[0] == "START" and kinds[-1] == "ABORT" and set(kinds[1:-1]) == {"RUNNING"} and len(kinds) >= 3
    assert mine[0]["job"]["facets"]["jobType"]["processingType"] == "STREAMING"
    assert mine[0]["job"]["facets"]["jobType"]["emissionPattern"] == {
        "eventTrigger": "PERIODIC", "eventContentMode": "ACCUMULATIVE", "windowDuration": 2}
    clean = [e for e in events if e["run"]["runId"] == node_run_id(run.run_id, "model.orders_clean")]
    assert clean[0]["eventType"] == "START" and clean[-1]["eventType"] == "COMPLETE"
    assert clean[-1]["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == sum(
        m["new_rows"] for m in batches)
    # the OpenLineage sensor does not rebuild a continuous run's events when it ends: they went out live
    assert len([e for e in events if e["run"]["runId"] == parent_run_id(run.run_id)]) == len(mine)
