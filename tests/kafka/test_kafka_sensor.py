"""The new-data sensor of a Kafka source on a real broker: one run per move of the topic's end offsets
(keyed by them, so a retried tick asks for the same run), none without new records, and the source's
asset observed with ``kafka/end_offsets`` and ``kafka/lag`` when they change."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from dagster_streamt.dagster import build_definitions
from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker
from dagster_streamt.spark.storage.paths import ProjectPaths

from ..helpers import write_project
from .test_lag import PROJECT, project, topics
from .test_lag_checkpoint import batch

pytestmark = pytest.mark.kafka


def tick(defs: dg.Definitions, name: str, cursor: str | None,
         instance: dg.DagsterInstance) -> dg.SensorExecutionData:
    sensor = defs.resolve_sensor_def(name)
    return sensor.evaluate_tick(dg.build_sensor_context(cursor=cursor, instance=instance, definitions=defs))


def observation(data: dg.SensorExecutionData) -> dict[str, object]:
    (event,) = [e for e in data.asset_events if not isinstance(e, dg.AssetMaterialization)]
    assert isinstance(event, dg.AssetObservation) and event.asset_key == dg.AssetKey(["sources", "payments"])
    return {k: getattr(v, "value", v) for k, v in event.metadata.items()}


def test_sensor_fires_once_per_new_offsets_and_observes_lag(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    servers = kafka_broker.bootstrap_servers
    pay, refunds = topics(servers)
    root = project(tmp_path, servers, pay, refunds)
    defs = build_definitions(root)
    names = {s.name for s in defs.sensors}
    assert {"payments_new_data", "refunds_new_data"} <= names
    end = admin.end_offsets(servers, pay)
    with dg.instance_for_test() as instance:
        # tick 1: records the empty cursor has not seen -> one run of the streams fed (and downstream)
        data = tick(defs, "payments_new_data", None, instance)
        (request,) = data.run_requests or []
        assert sorted(k.to_user_string() for k in request.asset_selection or []) == ["clean", "doubled"]
        assert request.tags["streamt/source"] == "payments" and request.tags["streamt/new_records"] == "40"
        cursor1 = data.cursor
        assert cursor1 is not None and json.loads(cursor1) == {pay: {str(p): o for p, o in sorted(end.items())}}
        md = observation(data)
        assert md["kafka/end_offsets"] == {pay: {str(p): o for p, o in sorted(end.items())}}
        assert "kafka/lag" not in md and md["kafka/messages"] == 40  # no stream has run: lag unknown
        # the new records are the source's update (what Dagster's freshness policy counts from)
        (first,) = [e for e in data.asset_events if isinstance(e, dg.AssetMaterialization)]
        assert first.asset_key == dg.AssetKey(["sources", "payments"]) and first.metadata["seen_by"].value == \
            "sensor payments_new_data"
        instance.report_runless_asset_event(first)

        # a retried tick from the same cursor asks for the same run: Dagster drops the repeat
        again = tick(defs, "payments_new_data", None, instance)
        assert [r.run_key for r in again.run_requests or []] == [request.run_key]

        # tick 2: no new records -> no run, the same cursor; the observation recorded before is not repeated
        instance.report_runless_asset_event(data.asset_events[0])
        data = tick(defs, "payments_new_data", cursor1, instance)
        assert not data.run_requests and data.skip_message == "no new records" and data.cursor == cursor1
        assert data.asset_events == []

        # the stream ran (a committed batch at the end offsets): lag 0 is observed, still no run
        batch(ProjectPaths.from_project(defs_project(root)).checkpoint("clean"), 0,
              {pay: {str(p): o for p, o in end.items()}})
        data = tick(defs, "payments_new_data", cursor1, instance)
        assert not data.run_requests and observation(data)["kafka/lag"] == 0
        instance.report_runless_asset_event(data.asset_events[0])

        # tick 3: 5 more records -> one more run with another key, the cursor moves, lag 5 observed
        admin.produce(servers, pay, [(f"n{i}", json.dumps({"id": 100 + i})) for i in range(5)])
        data = tick(defs, "payments_new_data", cursor1, instance)
        (request3,) = data.run_requests or []
        assert request3.run_key != request.run_key and request3.tags["streamt/new_records"] == "5"
        assert data.cursor != cursor1 and observation(data)["kafka/lag"] == 5
        (update,) = [e for e in data.asset_events if isinstance(e, dg.AssetMaterialization)]
        assert update.tags["dagster/data_version"] != first.tags["dagster/data_version"]

        # the batch-only source's sensor sees new records but has no stream to run
        data = tick(defs, "refunds_new_data", None, instance)
        assert not data.run_requests and "feeds no stream model" in (data.skip_message or "")


def defs_project(root: Path):  # type: ignore[no-untyped-def]
    from dagster_streamt.api import load
    return load(root).project


def test_source_asset_is_observable_with_offsets(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    servers = kafka_broker.bootstrap_servers
    pay, refunds = topics(servers)
    defs = build_definitions(project(tmp_path, servers, pay, refunds))
    assets_def = defs.resolve_assets_def(dg.AssetKey(["sources", "payments"]))
    assert assets_def.is_observable
    job = dg.Definitions(assets=[assets_def], jobs=[dg.define_asset_job("observe", selection=[assets_def.key])])
    with dg.instance_for_test() as instance:
        assert job.resolve_job_def("observe").execute_in_process(instance=instance).success
        (record,) = instance.fetch_observations(assets_def.key, limit=5).records
        assert record.asset_observation is not None
        md = record.asset_observation.metadata
        assert md["kafka/end_offsets"].value == {pay: {str(p): o for p, o in sorted(
            admin.end_offsets(servers, pay).items())}}
        assert md["kafka/messages"].value == 40 and "kafka/lag" not in md  # no stream has run yet


def test_no_sensor_without_a_broker(tmp_path: Path) -> None:
    """Topics as local folders: nothing to ask offsets of, so no Kafka sensor (and a plain asset)."""
    text = PROJECT.format(servers="localhost:9092", pay="pay", refunds="refunds").replace(
        "    bootstrap_servers: localhost:9092", "    local_dir: topics")
    defs = build_definitions(write_project(tmp_path / "local", {"stream_project.yml": text}))
    assert not {"payments_new_data", "refunds_new_data"} & {s.name for s in defs.sensors}
    assert not defs.resolve_assets_def(dg.AssetKey(["sources", "payments"])).is_observable
