"""Partitioned tables: a run replaces exactly its partitions, reads of a same-partitioned upstream are
limited to the run's window, static partitions, and clear errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dagster_streamt.spark import run_models
from dagster_streamt.spark.run.partitions import PartitionScope, signature
from dagster_streamt.spark.sources.relations import register_model_view
from dagster_streamt.spark.storage.warehouse import Warehouse

from .helpers import jsonl, plan

DAY = {"column": "ts", "granularity": "day", "start": "2026-01-01"}

pytestmark = pytest.mark.spark


def events() -> str:
    # two rows per day on Jan 1..5 (amounts day*10 and day*10+1), one row on Jan 2 at 23:30 Paris time
    out = []
    for day in range(1, 6):
        out += [{"id": f"{day}a", "ts": f"2026-01-0{day}T08:00:00Z", "amount": day * 10},
                {"id": f"{day}b", "ts": f"2026-01-0{day}T20:00:00Z", "amount": day * 10 + 1}]
    return jsonl(out)


CONFIG: dict[str, Any] = {
    "sources": [{"name": "events", "format": "json", "path": "data/events",
                 "columns": [{"name": "id"}, {"name": "ts", "type": "timestamp"}, {"name": "amount", "type": "int"}]}],
    "models": [
        {"name": "daily_events", "materialized": "table", "partitioned_by": DAY,
         "sql": "SELECT id, ts, amount FROM {{ source('events') }} "
                "WHERE ts >= {{ partition_start }} AND ts < {{ partition_end }}"},
        {"name": "daily_totals", "materialized": "table", "partitioned_by": {**DAY, "column": "day"},
         "sql": "SELECT CAST(date_trunc('DAY', ts) AS TIMESTAMP) AS day, sum(amount) AS total, count(*) AS n "
                "FROM {{ ref('daily_events') }} GROUP BY 1"},
    ],
}


def scope(pb: dict[str, Any], first: int, last: int) -> PartitionScope:
    from dagster_streamt.spec.models import PartitionedBy

    keys = tuple(f"2026-01-{d:02d}" for d in range(first, last + 1))
    start = datetime(2026, 1, first, tzinfo=UTC)
    return PartitionScope(keys, signature(PartitionedBy(**pb)), start, start + timedelta(days=len(keys)))


def run_scope(spark: Any, project: Any, names: list[str], sc: PartitionScope | None) -> dict[str, Any]:
    models, levels, ups = plan(project, names)
    return {r.model: r for r in run_models(spark, project, models, levels, ups, partition=sc)}


def table(spark: Any, project: Any, name: str) -> list[tuple[Any, ...]]:
    df = spark.table(register_model_view(spark, project, name))
    return sorted(tuple(r) for r in df.collect())


def test_backfill_writes_exactly_its_partitions_and_rerun_replaces(spark: Any, tmp_project: Any) -> None:
    project = tmp_project(CONFIG, {"data/events/a.json": events()})
    results = run_scope(spark, project, ["daily_events", "daily_totals"], scope(DAY, 2, 4))
    assert {n: r.status for n, r in results.items()} == {"daily_events": "success", "daily_totals": "success"}
    assert results["daily_events"].rows_written == 6
    assert results["daily_events"].partitions == ["2026-01-02", "2026-01-03", "2026-01-04"]
    assert {r[0][0] for r in table(spark, project, "daily_events")} == {"2", "3", "4"}
    totals = table(spark, project, "daily_totals")
    assert [(r[1], r[2]) for r in totals] == [(41, 2), (61, 2), (81, 2)]
    folders = sorted(p.name for p in Warehouse.for_project(project).data_dir("daily_events").iterdir()
                     if p.name.startswith("streamt_partition="))
    assert folders == ["streamt_partition=2026-01-02", "streamt_partition=2026-01-03", "streamt_partition=2026-01-04"]

    # new late data for Jan 3, then a rerun of that one partition: replaced, not appended
    (project.root / "data/events/late.json").write_text(jsonl([{"id": "3c", "ts": "2026-01-03T12:00:00Z",
                                                               "amount": 5}]))
    results = run_scope(spark, project, ["daily_events", "daily_totals"], scope(DAY, 3, 3))
    assert results["daily_events"].rows_written == 3
    assert results["daily_totals"].input_rows == 3  # read only the Jan 3 partition of daily_events
    ids = sorted(r[0] for r in table(spark, project, "daily_events"))
    assert ids == ["2a", "2b", "3a", "3b", "3c", "4a", "4b"]
    assert results["daily_events"].table_rows == len(ids)  # the table: every partition, not this run's
    assert [(r[1], r[2]) for r in table(spark, project, "daily_totals")] == [(41, 2), (66, 3), (81, 2)]


def test_rows_outside_the_window_are_counted_not_written(spark: Any, tmp_project: Any) -> None:
    config = {**CONFIG, "models": [{"name": "all_events", "materialized": "table", "partitioned_by": DAY,
                                    "sql": "SELECT id, ts FROM {{ source('events') }}"}]}
    project = tmp_project(config, {"data/events/a.json": events()})
    result = run_scope(spark, project, ["all_events"], scope(DAY, 1, 1))["all_events"]
    assert (result.rows_written, result.rows_outside_partitions) == (2, 8)


def test_partition_that_becomes_empty_is_cleared(spark: Any, tmp_project: Any) -> None:
    project = tmp_project(CONFIG, {"data/events/a.json": events()})
    run_scope(spark, project, ["daily_events"], scope(DAY, 1, 2))
    (project.root / "data/events/a.json").write_text(jsonl([{"id": "1a", "ts": "2026-01-01T08:00:00Z",
                                                            "amount": 1}]))
    result = run_scope(spark, project, ["daily_events"], scope(DAY, 1, 2))["daily_events"]
    assert result.rows_written == 1
    assert [r[0] for r in table(spark, project, "daily_events")] == ["1a"]


def test_time_zone_of_partitions(spark: Any, tmp_project: Any) -> None:
    paris = {**DAY, "timezone": "Europe/Paris"}
    config = {**CONFIG, "models": [{"name": "paris_days", "materialized": "table", "partitioned_by": paris,
                                    "sql": "SELECT id, ts FROM {{ source('events') }}"}]}
    rows = [{"id": "late", "ts": "2026-01-01T23:30:00Z", "amount": 1},  # Jan 2, 00:30 in Paris
            {"id": "early", "ts": "2026-01-01T22:30:00Z", "amount": 1}]  # Jan 1, 23:30 in Paris
    project = tmp_project(config, {"data/events/a.json": jsonl(rows)})
    sc = scope(paris, 2, 2)
    result = run_scope(spark, project, ["paris_days"], sc)["paris_days"]
    assert result.rows_written == 1
    assert [r[0] for r in table(spark, project, "paris_days")] == ["late"]


def test_static_partitions(spark: Any, tmp_project: Any) -> None:
    regions = {"column": "region", "values": ["eu", "us"]}
    config = {
        "sources": [{"name": "sales", "format": "json", "path": "data/sales"}],
        "models": [{"name": "sales_by_region", "materialized": "table", "partitioned_by": regions,
                    "sql": "SELECT region, amount FROM {{ source('sales') }} WHERE region IN {{ partition_keys }}"}],
    }
    data = jsonl([{"region": "eu", "amount": 1}, {"region": "us", "amount": 2}, {"region": "eu", "amount": 3}])
    project = tmp_project(config, {"data/sales/a.json": data})
    from dagster_streamt.spec.models import PartitionedBy

    sig = signature(PartitionedBy(**regions))
    assert run_scope(spark, project, ["sales_by_region"], PartitionScope(("eu",), sig))[
        "sales_by_region"].rows_written == 2
    assert run_scope(spark, project, ["sales_by_region"], PartitionScope(("us",), sig))[
        "sales_by_region"].rows_written == 1
    assert run_scope(spark, project, ["sales_by_region"], PartitionScope(("eu",), sig))[
        "sales_by_region"].rows_written == 2
    assert table(spark, project, "sales_by_region") == [("eu", 1), ("eu", 3), ("us", 2)]


@pytest.mark.parametrize(("sc", "message"), [
    (None, "streamt backfill daily_events --from"),
    (PartitionScope(("eu",), "other"), "other partitions than the model's"),
])
def test_partitioned_model_needs_its_partitions(spark: Any, tmp_project: Any, sc: Any, message: str) -> None:
    project = tmp_project(CONFIG, {"data/events/a.json": events()})
    result = run_scope(spark, project, ["daily_events"], sc)["daily_events"]
    assert result.status == "failed" and message in (result.error or "")


def test_partition_column_must_be_an_output_column(spark: Any, tmp_project: Any) -> None:
    config = {**CONFIG, "models": [{"name": "bad", "materialized": "table", "partitioned_by": DAY,
                                    "sql": "SELECT id FROM {{ source('events') }}"}]}
    project = tmp_project(config, {"data/events/a.json": events()})
    result = run_scope(spark, project, ["bad"], scope(DAY, 1, 1))["bad"]
    assert result.status == "failed" and "partitioned_by column 'ts' is not one of its output columns" in result.error


def test_a_keyed_partitioned_table_keeps_one_row_per_key_in_its_partitions(spark: Any, tmp_project: Any) -> None:
    """A `key:` on a partitioned table: the latest row per key (by the source's event time) in the run's
    partitions; without an event time a shared key stops the run and no partition is replaced."""
    sql = "SELECT substr(id, 1, 1) AS day_id, ts, amount FROM {{ source('events') }}"
    timed = {**CONFIG, "sources": [{**CONFIG["sources"][0], "event_time": {"column": "ts"}}],
             "models": [{"name": "per_day", "materialized": "table", "partitioned_by": DAY, "key": "day_id",
                         "sql": sql}]}
    project = tmp_project(timed, {"data/events/a.json": events()}, name="timed")
    result = run_scope(spark, project, ["per_day"], scope(DAY, 2, 3))["per_day"]
    assert result.status == "success", result.error
    assert [(r[0], r[2]) for r in table(spark, project, "per_day")] == [("2", 21), ("3", 31)]  # the 20:00 rows

    untimed = {**CONFIG, "models": timed["models"]}
    plain = tmp_project(untimed, {"data/events/a.json": events()}, name="untimed")
    failed = run_scope(spark, plain, ["per_day"], scope(DAY, 2, 3))["per_day"]
    assert failed.status == "failed" and "rows share the key (day_id)" in failed.error
    assert not Warehouse.for_project(plain).data_dir("per_day").exists() or \
        not list(Warehouse.for_project(plain).data_dir("per_day").glob("streamt_partition=*"))
