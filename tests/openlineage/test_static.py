"""The static export: spec-valid JobEvents and DatasetEvents, sorted and byte-for-byte repeatable."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from dagster_streamt.api import LoadedProject
from dagster_streamt.lineage.column_types import ProjectColumnLineage
from dagster_streamt.openlineage.static import static_events, write_jsonl

from .conftest import MakeProject
from .spec import assert_valid


def _kind(event: dict[str, object]) -> str:
    return str(event["schemaURL"]).rsplit("/", 1)[-1]


def test_static_export_validates(example: LoadedProject, example_columns: ProjectColumnLineage) -> None:
    events = static_events(example, columns=example_columns)
    assert_valid(events)
    assert all("run" not in e for e in events)
    datasets = [e for e in events if _kind(e) == "DatasetEvent"]
    jobs = [e for e in events if _kind(e) == "JobEvent"]
    assert len(datasets) + len(jobs) == len(events)
    assert sorted(d["dataset"]["name"].rsplit("/", 1)[-1] for d in datasets) == ["customers", "orders"]
    names = [j["job"]["name"] for j in jobs]
    assert names == sorted(names) == [
        "shop.customer_orders", "shop.daily_revenue", "shop.exposure.billing_service", "shop.exposure.ops_dashboard",
        "shop.high_value_orders", "shop.order_metrics", "shop.orders_clean", "shop.orders_export"]
    by_name = {j["job"]["name"]: j for j in jobs}
    dashboard = by_name["shop.exposure.ops_dashboard"]
    assert [i["name"].rsplit("/", 1)[-1] for i in dashboard["inputs"]] == ["order_metrics"]
    assert dashboard["job"]["facets"]["jobType"]["jobType"] == "DASHBOARD"
    clean = by_name["shop.orders_clean"]
    assert clean["outputs"][0]["facets"]["columnLineage"]["fields"]["status"]["inputFields"][0]["field"] == "status"
    # the model's output and the downstream model's input are the same dataset: lineage connects
    assert clean["outputs"][0]["name"] in {i["name"] for i in by_name["shop.customer_orders"]["inputs"]}


def test_static_export_is_deterministic(example: LoadedProject, example_columns: ProjectColumnLineage,
                                        tmp_path: Path) -> None:
    first = write_jsonl(static_events(example, columns=example_columns), tmp_path / "a.jsonl").read_bytes()
    second = write_jsonl(static_events(example, columns=example_columns), tmp_path / "b.jsonl").read_bytes()
    assert first == second and first.count(b"\n") == 10
    fixed = datetime(2026, 1, 1, tzinfo=UTC)
    assert {e["eventTime"] for e in static_events(example, columns=example_columns, event_time=fixed)} == {
        "2026-01-01T00:00:00.000Z"}


def test_static_export_without_column_lineage(make_project: MakeProject) -> None:
    loaded = make_project({
        "sources": [{"name": "raw", "format": "json", "path": "data/raw", "columns": [{"name": "a", "type": "int"}]},
                    {"name": "topic", "format": "kafka", "topic": "a,b",
                     "options": {"kafka.bootstrap.servers": "k:9092"}}],
        "models": [{"name": "m", "sql": "SELECT a FROM {{ source('raw') }}"}],
    })
    events = static_events(loaded, with_columns=False)
    assert_valid(events)
    assert [e["dataset"]["name"] for e in events if "dataset" in e][-2:] == ["a", "b"]  # one per topic
    job = next(e for e in events if "job" in e)
    assert "columnLineage" not in job["outputs"][0]["facets"]
    assert job["outputs"][0]["facets"]["schema"]["fields"] == [{"name": "a", "ordinal_position": 1}]  # type unknown
