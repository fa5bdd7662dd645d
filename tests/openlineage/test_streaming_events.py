"""A continuous run's OpenLineage events (no JVM): each kind validates against the spec's schemas, jobs say
STREAMING with their emission pattern, RUNNING restates the totals, the parent is the Dagster run."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from openlineage.client.event_v2 import RunState

from dagster_streamt import load
from dagster_streamt.openlineage.events import node_run_id, parent_run_id, to_dict
from dagster_streamt.openlineage.streaming import StreamingEvents, StreamTotals

from .spec import assert_valid

ROOT = Path(__file__).parents[2]
RUN = "0d4c2b1a-5e6f-4a3b-9c8d-7e6f5a4b3c2d"


def test_streaming_events_validate_and_say_what_they_are() -> None:
    events = StreamingEvents(load(ROOT / "project"), RUN, 30)
    now = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    totals = StreamTotals("orders_clean", rows_in=120, rows_out=118, batches=3)
    built = [events.parent_event(RunState.START, now),
             events.model_event(RunState.START, StreamTotals("orders_clean"), now),
             events.model_event(RunState.RUNNING, totals, now),
             events.parent_event(RunState.RUNNING, now),
             events.model_event(RunState.COMPLETE, totals, now),
             events.model_event(RunState.FAIL, StreamTotals("order_metrics", 5, 0, 1), now,
                                "model order_metrics: boom"),
             events.parent_event(RunState.ABORT, now, "run terminated")]
    docs = [to_dict(e) for e in built]
    assert_valid(docs)
    assert [d["eventType"] for d in docs] == ["START", "START", "RUNNING", "RUNNING", "COMPLETE", "FAIL", "ABORT"]
    assert {d["job"]["facets"]["jobType"]["processingType"] for d in docs} == {"STREAMING"}
    assert {str(d["job"]["facets"]["jobType"]["emissionPattern"]) for d in docs} == {
        str({"eventTrigger": "PERIODIC", "eventContentMode": "ACCUMULATIVE", "windowDuration": 30})}
    parent, model = docs[0], docs[2]
    assert parent["job"]["name"] == "shop.continuous" and parent["run"]["runId"] == parent_run_id(RUN)
    assert model["run"]["runId"] == node_run_id(RUN, "model.orders_clean")
    assert model["run"]["facets"]["parent"]["run"]["runId"] == parent_run_id(RUN)
    assert model["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 118
    assert model["inputs"][0]["inputFacets"]["inputStatistics"]["rowCount"] == 120  # one input: orders_raw
    assert "outputFacets" not in docs[1]["outputs"][0]  # START counts nothing yet
    assert docs[5]["run"]["facets"]["errorMessage"]["message"] == "model order_metrics: boom"
    assert docs[5]["inputs"][0]["inputFacets"]["inputStatistics"]["rowCount"] == 5  # what it read before failing
