"""New-data sensors on file sources, evaluated with Dagster's sensor test context across ticks."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.new_data_sensor import fed_models, read_cursor, run_key
from dagster_streamt.source_files import DataFile, data_files

from ..helpers import S3_BUCKET, s3_conf, write_project

FILES = {
    "stream_project.yml": "project: {name: nd}\n",
    "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data/events
            columns: [{name: id, type: bigint}, {name: ts, type: timestamp}]
            sensor: {minimum_interval_seconds: 45}
          - name: customers
            format: csv
            path: data/customers
            columns: [{name: id, type: bigint}]
            sensor: {enabled: false}
          - name: clicks
            topic: clicks
        """,
    "models/m.yml": """\
        models:
          - name: clean
            materialized: stream
            sql: SELECT id, ts FROM {{ source("events") }}
          - name: per_id
            materialized: table
            sql: SELECT id, count(*) AS n FROM {{ ref("clean") }} GROUP BY id
          - name: recent
            materialized: view
            sql: SELECT id FROM {{ ref("clean") }}
          - name: raw_view
            materialized: view
            sql: SELECT id, ts FROM {{ source("events") }}
          - name: via_view
            materialized: stream
            sql: SELECT id FROM {{ ref("raw_view") }}
          - name: full_table
            materialized: table
            sql: SELECT count(*) AS n FROM {{ source("events") }}
          - name: retired
            enabled: false
            materialized: table
            sql: SELECT id FROM {{ ref("clean") }}
          - name: customer_ids
            materialized: table
            sql: SELECT id FROM {{ source("customers") }}
        """,
}
EXPECTED = ["clean", "per_id", "recent", "via_view"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "p", dict(FILES))
    events = root / "data" / "events"
    events.mkdir(parents=True)
    (events / "a.json").write_text('{"id": 1, "ts": "2026-01-01T00:00:00"}\n')
    # bookkeeping Spark and writers leave next to data: never new data
    (events / "_SUCCESS").write_text("")
    (events / ".a.json.crc").write_text("x")
    (events / "_spark_metadata").mkdir()
    (events / "_spark_metadata" / "0").write_text("v1")
    (events / "b.json._COPYING_").write_text("partial")
    return root


def tick(defs: dg.Definitions, name: str, cursor: str | None,
         instance: dg.DagsterInstance) -> tuple[list[dg.RunRequest], str | None, str | None]:
    sensor = defs.resolve_sensor_def(name)
    data = sensor.evaluate_tick(dg.build_sensor_context(cursor=cursor, instance=instance, definitions=defs))
    return list(data.run_requests or []), data.cursor, data.skip_message


def test_new_files_request_one_run_per_batch(root: Path) -> None:
    defs = build_definitions(root)
    with dg.instance_for_test() as instance:
        # tick 1: the existing file is new to an empty cursor
        requests, cursor1, _ = tick(defs, "events_new_data", None, instance)
        assert len(requests) == 1
        assert sorted(k.to_user_string() for k in requests[0].asset_selection or []) == EXPECTED
        assert requests[0].tags["streamt/source"] == "events" and requests[0].tags["streamt/new_files"] == "1"
        assert cursor1 is not None and list(json.loads(cursor1)) == ["a.json"]
        first_key = requests[0].run_key

        # a retried tick from the same cursor asks for the same run: Dagster drops the repeat
        again, _, _ = tick(defs, "events_new_data", None, instance)
        assert again[0].run_key == first_key

        # tick 2: two files added (one in a subfolder) -> one run for the batch, the cursor advances
        (root / "data" / "events" / "b.json").write_text('{"id": 2, "ts": "2026-01-01T01:00:00"}\n')
        (root / "data" / "events" / "day=2").mkdir()
        (root / "data" / "events" / "day=2" / "c.json").write_text('{"id": 3, "ts": "2026-01-02T00:00:00"}\n')
        requests, cursor2, _ = tick(defs, "events_new_data", cursor1, instance)
        assert len(requests) == 1 and requests[0].run_key not in (None, first_key)
        assert requests[0].tags["streamt/new_files"] == "2"
        assert cursor2 is not None and sorted(json.loads(cursor2)) == ["a.json", "b.json", "day=2/c.json"]
        assert cursor2 == json.dumps(json.loads(cursor2), sort_keys=True, separators=(",", ":"))

        # tick 3: nothing changed -> no run, same cursor
        requests, cursor3, skip = tick(defs, "events_new_data", cursor2, instance)
        assert requests == [] and skip == "no new files" and cursor3 == cursor2

        # tick 4: a file grew (appended to) -> a run
        with (root / "data" / "events" / "a.json").open("a") as f:
            f.write('{"id": 4, "ts": "2026-01-03T00:00:00"}\n')
        requests, cursor4, _ = tick(defs, "events_new_data", cursor3, instance)
        assert len(requests) == 1 and requests[0].tags["streamt/new_files"] == "1"
        assert cursor4 != cursor3

        # a deleted file is no new data
        (root / "data" / "events" / "b.json").unlink()
        requests, cursor5, skip = tick(defs, "events_new_data", cursor4, instance)
        assert requests == [] and skip == "no new files" and "b.json" not in json.loads(cursor5 or "{}")


def test_sensor_settings_and_sources_without_files(root: Path) -> None:
    defs = build_definitions(root)
    names = {s.name for s in defs.sensors}
    assert {"events_new_data", "customers_new_data"} <= names
    assert "clicks_new_data" not in names  # kafka: nothing to list, use a schedule
    events = defs.resolve_sensor_def("events_new_data")
    # linked to the source it watches (the source's page lists it), while its runs name only models
    assert dg.AssetKey(["sources", "events"]) in events.asset_selection.resolve(defs.resolve_asset_graph())
    assert events.default_status == dg.DefaultSensorStatus.STOPPED and events.minimum_interval_seconds == 45
    customers = defs.resolve_sensor_def("customers_new_data")
    assert customers.default_status == dg.DefaultSensorStatus.STOPPED and customers.minimum_interval_seconds == 30

    with dg.instance_for_test() as instance:
        # the folder does not exist yet: skip, and pick the files up once they arrive
        requests, cursor, skip = tick(defs, "customers_new_data", None, instance)
        assert requests == [] and skip is not None and "does not exist yet" in skip and cursor == "{}"
        (root / "data" / "customers").mkdir(parents=True)
        (root / "data" / "customers" / "c.csv").write_text("id\n1\n")
        # ...but customers feeds only a table model: say so rather than run it on every file
        requests, cursor, skip = tick(defs, "customers_new_data", cursor, instance)
        assert requests == [] and skip is not None and "feeds no stream model" in skip
        assert list(json.loads(cursor or "{}")) == ["c.csv"]


def test_fed_models_skip_partitioned_and_disabled(tmp_path: Path) -> None:
    files = dict(FILES)
    files["models/p.yml"] = """\
        models:
          - name: by_day
            partitioned_by: {column: ts, granularity: day, start: "2026-01-01"}
            sql: SELECT id, ts FROM {{ ref("clean") }}
          - name: after_by_day
            sql: SELECT count(*) AS n FROM {{ ref("by_day") }}
        """
    loaded = load(write_project(tmp_path / "p", files))
    assert not loaded.errors, [d.format() for d in loaded.errors]
    assert fed_models(loaded, "events") == ["after_by_day", *EXPECTED]
    assert fed_models(loaded, "customers") == []


def test_cursor_and_run_key_helpers(tmp_path: Path) -> None:
    assert read_cursor("not json") == {} and read_cursor(None) == {}
    assert read_cursor('{"a": [1, 2]}') == {"a": (1, 2)}
    a, b = DataFile("a", 1, 10), DataFile("b", 2, 20)
    assert run_key("s", [a, b]) == run_key("s", [b, a]) != run_key("s", [a, DataFile("b", 3, 20)])
    single = tmp_path / "one.json"
    single.write_text("{}\n")
    assert [f.path for f in data_files(single)] == ["one.json"]
    assert data_files(tmp_path / "missing") == []


def test_new_files_are_reported_as_the_sources_update(root: Path) -> None:
    """What Dagster's freshness policy on the source counts from: one materialization of the source per
    new state of its files (stored as the daemon stores a sensor's asset events), never two for one."""
    defs = build_definitions(root)
    sensor = defs.resolve_sensor_def("events_new_data")
    key = dg.AssetKey(["sources", "events"])
    with dg.instance_for_test() as instance:
        def events(cursor: str | None) -> list[dg.AssetMaterialization]:
            data = sensor.evaluate_tick(dg.build_sensor_context(cursor=cursor, instance=instance, definitions=defs))
            found = [e for e in data.asset_events if isinstance(e, dg.AssetMaterialization)]
            for event in found:
                instance.report_runless_asset_event(event)
            return found

        first = events(None)
        assert [e.asset_key for e in first] == [key]
        mtime = (root / "data" / "events" / "a.json").stat().st_mtime
        assert first[0].metadata["dagster/last_updated_timestamp"].value == pytest.approx(mtime, abs=0.01)
        assert first[0].metadata["files"].value == 1  # bookkeeping files are not data
        assert first[0].metadata["seen_by"].value == "sensor events_new_data"
        assert events(None) == []  # a retried tick: the same files, already reported
        (root / "data" / "events" / "b.json").write_text('{"id": 2, "ts": "2026-01-01T01:00:00"}\n')
        second = events(None)
        assert len(second) == 1 and second[0].tags["dagster/data_version"] != first[0].tags["dagster/data_version"]
        latest = instance.get_latest_materialization_event(key)
        assert latest is not None and latest.asset_materialization is not None
        assert latest.asset_materialization.tags["dagster/data_version"] == second[0].tags["dagster/data_version"]


def test_a_source_on_an_object_store_is_listed_there(s3_endpoint: str, tmp_path: Path) -> None:
    """A file source whose path is an ``s3a://`` prefix (a cluster's landing bucket): the sensor and source
    freshness list the bucket with the project's fs.s3a settings, skipping what Spark skips, not a folder
    named after the URI."""
    from dagster_streamt.checks.source_freshness import newest_file
    from dagster_streamt.spark.storage.store import ObjectPath, StoreOptions

    landing = f"s3a://{S3_BUCKET}/landing-{tmp_path.name}"
    conf = json.dumps({"spark": {"conf": s3_conf(s3_endpoint)}})
    root = write_project(tmp_path / "p", {**FILES, "stream_project.yml": f"project: {{name: nd}}\nruntime: {conf}\n",
                                          "sources/s.yml": FILES["sources/s.yml"].replace("data/events", landing)})
    bucket = ObjectPath(landing, StoreOptions.from_spark_conf(s3_conf(s3_endpoint)))
    for name in ("a.json", "_SUCCESS", "_spark_metadata/0", "day=2/c.json"):
        (bucket / name).write_text('{"id": 1, "ts": "2026-01-01T00:00:00"}\n')
    assert [f.path for f in data_files(bucket)] == ["a.json", "day=2/c.json"]

    defs = build_definitions(root)
    with dg.instance_for_test() as instance:
        requests, cursor, _ = tick(defs, "events_new_data", None, instance)
        assert len(requests) == 1 and requests[0].tags["streamt/new_files"] == "2"
        (bucket / "b.json").write_text('{"id": 2, "ts": "2026-01-01T01:00:00"}\n')
        requests, _, _ = tick(defs, "events_new_data", cursor, instance)
        assert len(requests) == 1 and requests[0].tags["streamt/new_files"] == "1"

    project = load(root, use_cache=False).project
    last, detail, why = newest_file(project, project.sources["events"])
    assert why == "" and last is not None and detail["files"] == 3 and detail["path"] == landing
