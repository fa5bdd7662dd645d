"""The `<project>_continuous` job on a real broker (issue 43): a micro-batch model and a Real-time Mode model
read one Kafka topic inside one Dagster run; each batch's materialization says the topic's offsets and lag;
records produced while it runs reach both models' topics; terminated as the run launcher does, the run ends
CANCELED and each topic holds every record once (read back with a plain consumer)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dagster_streamt import build_definitions
from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker

from ..dagster.test_continuous_job import _until, materializations, run_until
from .test_real_time_e2e import PROJECT, big, orders, small
from .topics import read_topic

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
TOPIC, BIG, SMALL = "orders.continuous_job", "job_big_orders", "job_small_orders"
FAST = {"ops": {"realtime_streams": {"config": {"report_every_s": 1.0, "lineage_every_s": 2.0}}}}


def _topic(servers: str, topic: str) -> Counter[str]:
    if topic not in admin.list_topics(servers):
        return Counter()
    return Counter(json.dumps(r, sort_keys=True) for r in read_topic(servers, topic))


def test_kafka_streams_in_one_dagster_run(kafka_broker: KafkaBroker, tmp_path: Path, spark: Any) -> None:
    servers = kafka_broker.bootstrap_servers
    admin.create_topic(servers, TOPIC, partitions=1)
    first, second = orders(0, 40), orders(40, 40)
    admin.produce(servers, TOPIC, [(r["order_id"], json.dumps(r)) for r in first])
    root = tmp_path / "project"
    root.mkdir()
    # the session's broker is shared with test_real_time_e2e: topics of their own, for the source and the models
    text = PROJECT.format(servers=servers).replace("orders.raw", TOPIC)
    (root / "stream_project.yml").write_text(text.replace("big_orders", BIG).replace("small_orders", SMALL))
    job = build_definitions(root).resolve_job_def("realtime_continuous")
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        def steps(run_id: str) -> None:
            def offsets() -> Any:
                found = materializations(instance, run_id, SMALL)
                return found[-1]["kafka_offsets"] if found else None

            assert _until(offsets, "small_orders' first batch") == {TOPIC: {"0": 40}}
            _until(lambda: _topic(servers, BIG) == big(first), "big_orders in real-time mode")
            admin.produce(servers, TOPIC, [(r["order_id"], json.dumps(r)) for r in second])
            _until(lambda: offsets() == {TOPIC: {"0": 80}}, "the records produced while it runs")
            _until(lambda: _topic(servers, BIG) == big(first + second), "big_orders' new records")
            _until(lambda: _topic(servers, SMALL) == small(first + second), "small_orders' topic")
            last = materializations(instance, run_id, SMALL)[-1]
            assert last["kafka_lag"] == {TOPIC: 0} and last["kafka_offsets_behind"] == 0

        run, failures = run_until(job, instance, steps, FAST)
        assert not failures, failures
        assert run.status == dg.DagsterRunStatus.CANCELED
        stopped = {(o.asset_key.to_user_string(), o.metadata["streamt/status"].value) for o in (
            r.event_log_entry.asset_observation for r in instance.get_records_for_run(
                run.run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION).records)}
        assert {(BIG, "stopped"), (SMALL, "stopped")} <= stopped
    assert _topic(servers, SMALL) == small(first + second)  # stopping published nothing twice
    assert _topic(servers, BIG) == big(first + second)
