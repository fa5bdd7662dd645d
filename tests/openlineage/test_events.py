"""Run events for the example project validate against the 2-0-2 schemas and carry what they should."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import RunState

from dagster_streamt.api import LoadedProject
from dagster_streamt.checks.results import AssertionResult, TestResult
from dagster_streamt.core.results import ModelResult, failed, skipped
from dagster_streamt.lineage.column_types import ProjectColumnLineage
from dagster_streamt.openlineage.events import (
    DagsterRun,
    EventBuilder,
    assertions_from_tests,
    node_run_id,
    parent_run_id,
    to_dict,
)
from dagster_streamt.openlineage.facets import Assertion

from .spec import assert_valid

T0 = datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC)
RUN = DagsterRun(str(uuid.UUID(int=42)))
WINDOW = (datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC))


@pytest.fixture
def builder(example: LoadedProject, example_columns: ProjectColumnLineage) -> EventBuilder:
    return EventBuilder(example, columns=example_columns)


def pyspark_version() -> str:
    from importlib.metadata import version

    return version("pyspark")


def success(model: str, materialized: str, **kw: Any) -> ModelResult:
    return ModelResult(model=model, materialized=materialized, status="success", rows_written=10, duration_s=1.5,
                       schema=[("order_id", "bigint"), ("amount", "double")], **kw)


def all_events(builder: EventBuilder, example: LoadedProject, run: DagsterRun) -> list[dict[str, Any]]:
    """A whole Dagster run: every model once, in every terminal state the builder knows."""
    events = [builder.run_event(run, RunState.START, T0)]
    for i, name in enumerate(sorted(example.project.models)):
        kind = builder.datasets.materialized(name)
        start, end = T0 + timedelta(seconds=i), T0 + timedelta(seconds=i + 1)
        events += [to_dict(e) for e in builder.model_events(run, success(name, kind), start, end)]
        events.append(to_dict(builder.model_end(run, failed(name, kind, "AnalysisException: no column x"), end,
                                                stack_trace="Traceback ...")))
        events += [to_dict(e) for e in builder.model_events(run, skipped(name, kind, "upstream failed"), start, end)]
    events.append(builder.run_event(run, RunState.FAIL, T0 + timedelta(minutes=1), error="1 model failed"))
    events.append(builder.run_event(run, RunState.ABORT, T0 + timedelta(minutes=1), error="cancelled"))
    events.append(builder.run_event(run, RunState.COMPLETE, T0 + timedelta(minutes=1)))
    return [e if isinstance(e, dict) else to_dict(e) for e in events]


def test_every_event_kind_validates(builder: EventBuilder, example: LoadedProject) -> None:
    events = all_events(builder, example, RUN) + all_events(builder, example, DagsterRun("run-7", WINDOW))
    assert_valid(events)
    assert {e["eventType"] for e in events} == {"START", "COMPLETE", "FAIL", "ABORT"}


def test_run_ids_are_deterministic_and_parented(builder: EventBuilder) -> None:
    result = success("orders_clean", "stream")
    first = to_dict(builder.model_end(RUN, result, T0))
    again = to_dict(builder.model_end(RUN, result, T0 + timedelta(hours=1)))  # a retry, later
    assert first["run"]["runId"] == again["run"]["runId"] == node_run_id(RUN.run_id, "model.orders_clean")
    assert uuid.UUID(first["run"]["runId"]).version == 5
    assert first["run"]["runId"] != to_dict(builder.model_end(DagsterRun("other"), result, T0))["run"]["runId"]
    parent = first["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == RUN.run_id == parent_run_id(RUN.run_id)  # a Dagster run id is kept as is
    assert parent["job"] == {"namespace": "shop", "name": "shop.dagster_run"}
    assert parent["root"]["run"]["runId"] == RUN.run_id
    assert to_dict(builder.run_event(RUN, RunState.START, T0))["run"]["runId"] == RUN.run_id
    assert uuid.UUID(parent_run_id("not-a-uuid")).version == 5


def test_times_are_the_callers(builder: EventBuilder) -> None:
    start, end = T0, T0 + timedelta(seconds=90)
    events = [to_dict(e) for e in builder.model_events(RUN, success("customer_orders", "table"), start, end)]
    assert [e["eventTime"] for e in events] == ["2026-03-01T10:00:00.000Z", "2026-03-01T10:01:30.000Z"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    naive = to_dict(builder.model_start(RUN, "customer_orders", datetime(2026, 3, 1, 10)))
    assert naive["eventTime"] == "2026-03-01T10:00:00.000Z"


def test_model_job_facets(builder: EventBuilder, example: LoadedProject) -> None:
    e = to_dict(builder.model_start(RUN, "orders_clean", T0))
    job = e["job"]
    assert job == {**job, "namespace": "shop", "name": "shop.orders_clean"}
    facets = job["facets"]
    assert facets["jobType"] == {**facets["jobType"], "processingType": "STREAMING", "integration": "DAGSTER_STREAMT",
                                 "jobType": "MODEL"}
    assert facets["sql"]["query"] == example.compiled.models["orders_clean"].sql
    assert facets["ownership"]["owners"] == [{"name": "orders-team"}]
    assert facets["documentation"]["description"].startswith("Valid orders only")
    loc = facets["sourceCodeLocation"]
    assert loc["type"] == "file" and loc["path"] == "models/staging/orders_clean.yml"
    assert loc["url"].startswith("file://") and loc["url"].endswith("/models/staging/orders_clean.yml#L2")
    engine = e["run"]["facets"]["processing_engine"]
    assert engine["name"] == "spark" and engine["version"] == pyspark_version() and engine["openlineageAdapterVersion"]
    kinds = {m: to_dict(builder.model_start(RUN, m, T0))["job"]["facets"]["jobType"]["processingType"]
             for m in example.project.models}
    assert kinds == {"customer_orders": "BATCH", "daily_revenue": "BATCH", "high_value_orders": "BATCH",
                     "order_metrics": "STREAMING",
                     "orders_clean": "STREAMING", "orders_export": "STREAMING"}  # the sink reads a stream


def test_inputs_outputs_and_column_lineage(builder: EventBuilder, example: LoadedProject) -> None:
    root = example.project.root.resolve().as_posix()
    e = to_dict(builder.model_start(RUN, "customer_orders", T0))
    assert [(d["namespace"], d["name"]) for d in e["inputs"]] == [
        ("file", f"{root}/.streamt/warehouse/orders_clean"), ("file", f"{root}/data/customers")]
    (out,) = e["outputs"]
    assert (out["namespace"], out["name"]) == ("file", f"{root}/.streamt/warehouse/customer_orders")
    assert out["facets"]["symlinks"]["identifiers"] == [{"namespace": "shop", "name": "shop.customer_orders",
                                                         "type": "TABLE"}]
    cl = out["facets"]["columnLineage"]
    assert cl["fields"]["total_spent"]["inputFields"] == [{
        "namespace": "file", "name": f"{root}/.streamt/warehouse/orders_clean", "field": "amount",
        "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}]}]
    joined = [f for f in cl["dataset"] if f["name"].endswith("/data/customers") and f["field"] == "customer_id"]
    assert joined[0]["transformations"] == [{"type": "INDIRECT", "subtype": "GROUP_BY"},
                                            {"type": "INDIRECT", "subtype": "JOIN"}]
    names = [f["name"] for f in out["facets"]["schema"]["fields"]]
    assert names == ["customer_id", "country", "order_count", "total_spent", "last_order_at"]


def test_column_facet_is_pluggable(example: LoadedProject) -> None:
    e = to_dict(EventBuilder(example).model_start(RUN, "customer_orders", T0))
    assert "columnLineage" not in e["outputs"][0]["facets"]
    assert_valid([e])


def test_complete_failed_and_skipped(builder: EventBuilder, tmp_path: Path) -> None:
    version = tmp_path / "v=1"
    version.mkdir()
    (version / "part-0.parquet").write_bytes(b"x" * 100)
    (version / "_SUCCESS").write_bytes(b"")
    done = to_dict(builder.model_end(RUN, success("customer_orders", "table", location=str(version)), T0))
    out = done["outputs"][0]
    assert out["outputFacets"]["outputStatistics"] == {**out["outputFacets"]["outputStatistics"],
                                                       "rowCount": 10, "size": 100}
    assert [f["name"] for f in out["facets"]["schema"]["fields"]] == ["order_id", "amount"]  # observed schema
    stream = to_dict(builder.model_end(RUN, success("orders_clean", "stream"), T0, size_bytes=2048))
    assert stream["outputs"][0]["outputFacets"]["outputStatistics"]["size"] == 2048
    fail = to_dict(builder.model_end(RUN, failed("orders_clean", "stream", "boom"), T0, stack_trace="tb"))
    assert fail["eventType"] == "FAIL"
    assert fail["run"]["facets"]["errorMessage"] == {**fail["run"]["facets"]["errorMessage"], "message": "boom",
                                                     "programmingLanguage": "PYTHON", "stackTrace": "tb"}
    assert "outputFacets" not in fail["outputs"][0] or not fail["outputs"][0]["outputFacets"]
    skip = [to_dict(e) for e in builder.model_events(RUN, skipped("order_metrics", "stream", "upstream failed"),
                                                      T0, T0 + timedelta(seconds=5))]
    assert [e["eventType"] for e in skip] == ["START", "ABORT"]
    assert skip[0]["eventTime"] == skip[1]["eventTime"]
    assert skip[1]["run"]["facets"]["errorMessage"]["message"] == "upstream failed"
    assert "errorMessage" not in to_dict(builder.model_start(RUN, "orders_clean", T0))["run"]["facets"]


def test_partitioned_run_has_nominal_time(builder: EventBuilder) -> None:
    run = DagsterRun("run-1", WINDOW)
    e = to_dict(builder.model_start(run, "customer_orders", T0))
    assert e["run"]["facets"]["nominalTime"] == {**e["run"]["facets"]["nominalTime"],
                                                 "nominalStartTime": "2026-03-01T00:00:00.000Z",
                                                 "nominalEndTime": "2026-03-02T00:00:00.000Z"}
    assert "nominalTime" in to_dict(builder.run_event(run, RunState.START, T0))["run"]["facets"]
    assert "nominalTime" not in to_dict(builder.model_start(RUN, "customer_orders", T0))["run"]["facets"]
    assert_valid([e])


def test_quality_assertions_ride_on_inputs(builder: EventBuilder, example: LoadedProject) -> None:
    results = [TestResult(test="orders_clean_quality", target="model.orders_clean", severity="error", passed=False,
                          duration_seconds=0.1, assertions=(
                              AssertionResult(0, "not_null", "not_null", True, 0, 100, "order_id is never null"),
                              AssertionResult(1, "accepted_values", "accepted_values", False, 3, 100, "status"),
                          )),
               TestResult(test="orders_raw_unique_events", target="source.orders_raw", severity="warn", passed=True,
                          duration_seconds=0.1, assertions=(
                              AssertionResult(0, "unique", "unique", True, 0, 100, "unique"),
                              AssertionResult(1, "row_count", "row_count", True, 0, 100, "rows"),
                          ))]
    found = assertions_from_tests(example, results)
    assert Assertion("model.orders_clean", "accepted_values", False, "status", "error", "orders_clean_quality",
                     "status", "3") in found
    assert any(a.assertion == "row_count" and a.column is None for a in found)
    e = to_dict(builder.model_start(RUN, "customer_orders", T0, assertions=found))
    facet = next(d for d in e["inputs"] if d["name"].endswith("orders_clean"))["inputFacets"]["dataQualityAssertions"]
    assert [(a["assertion"], a["success"], a.get("column")) for a in facet["assertions"]] == [
        ("accepted_values", False, "status"), ("not_null", True, "order_id")]
    other = next(d for d in e["inputs"] if d["name"].endswith("customers"))
    assert not other.get("inputFacets")
    raw = to_dict(builder.model_end(RUN, success("orders_clean", "stream"), T0, assertions=found))
    assert len(raw["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]) == 2
    tests = [to_dict(x) for x in builder.test_events(RUN, "orders_clean_quality", found, T0, T0)]
    assert [t["eventType"] for t in tests] == ["START", "FAIL"]
    assert tests[1]["job"]["name"] == "shop.test.orders_clean_quality"
    assert tests[1]["run"]["facets"]["parent"]["run"]["runId"] == RUN.run_id
    warn_only = [to_dict(x) for x in builder.test_events(RUN, "orders_raw_unique_events", found, T0, T0)]
    assert warn_only[1]["eventType"] == "COMPLETE"
    assert_valid([e, raw, *tests, *warn_only])
