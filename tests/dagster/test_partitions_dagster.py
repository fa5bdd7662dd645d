"""Partitioned models in Dagster: their own partitioned multi-assets, a 3-partition backfill as one run
that writes exactly those partitions, a rerun of one partition, and `streamt backfill`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from click.testing import CliRunner

from dagster_streamt.cli.main import cli
from dagster_streamt.dagster import build_definitions
from dagster_streamt.dagster.resources import SparkResource
from dagster_streamt.spark.sources.relations import register_model_view
from dagster_streamt.spec.loader import load_project

from ..conftest import StreamtHere
from ..helpers import write_project

RANGE = {"dagster/asset_partition_range_start": "2026-01-02", "dagster/asset_partition_range_end": "2026-01-04"}


def events() -> str:
    rows = [{"id": f"{d}{s}", "ts": f"2026-01-0{d}T{h}:00:00Z", "amount": d * 10 + i}
            for d in range(1, 6) for i, (s, h) in enumerate((("a", "08"), ("b", "20")))]
    return "".join(json.dumps(r) + "\n" for r in rows)


FILES = {
    "stream_project.yml": "project: {name: parts}\n",
    "sources/events.yml": """\
        sources:
          - name: events
            format: json
            path: data/events
            columns: [{name: id}, {name: ts, type: timestamp}, {name: amount, type: int}]
        """,
    "models/m.yml": """\
        models:
          - name: daily_events
            materialized: table
            partitioned_by: {column: ts, granularity: day, start: 2026-01-01, end: 2026-01-06}
            sql: |
              SELECT id, ts, amount FROM {{ source("events") }}
              WHERE ts >= {{ partition_start }} AND ts < {{ partition_end }}
          - name: daily_totals
            materialized: table
            partitioned_by: {column: day, granularity: day, start: 2026-01-01, end: 2026-01-06}
            sql: >-
              SELECT CAST(date_trunc('DAY', ts) AS TIMESTAMP) AS day, sum(amount) AS total
              FROM {{ ref("daily_events") }} GROUP BY 1
          - name: by_region
            materialized: table
            partitioned_by: {column: region, values: [eu, us], backfill: per_partition}
            sql: SELECT 'eu' AS region, count(*) AS n FROM {{ source("events") }}
          - name: overall
            sql: SELECT count(*) AS n FROM {{ ref("daily_events") }}
        """,
    "data/events/a.json": events(),
}


def project_root(tmp_path: Path) -> Path:
    return write_project(tmp_path / "parts", dict(FILES))


def test_partitioned_models_get_partitioned_assets(tmp_path: Path) -> None:
    defs = build_definitions(project_root(tmp_path))
    graph = defs.resolve_asset_graph()
    daily = graph.get(dg.AssetKey("daily_events"))
    assert isinstance(daily.partitions_def, dg.DailyPartitionsDefinition)
    assert daily.partitions_def.get_partition_keys() == [f"2026-01-0{d}" for d in range(1, 6)]
    assert graph.get(dg.AssetKey("daily_totals")).partitions_def == daily.partitions_def
    assert graph.get(dg.AssetKey("overall")).partitions_def is None
    region = graph.get(dg.AssetKey("by_region")).partitions_def
    assert isinstance(region, dg.StaticPartitionsDefinition) and region.get_partition_keys() == ["eu", "us"]
    policies = {a.backfill_policy.policy_type.value if a.backfill_policy else None
                for a in defs.assets if isinstance(a, dg.AssetsDefinition) for k in a.keys if k.path == ["by_region"]}
    assert policies == {"MULTI_RUN"}
    daily_def = next(a for a in defs.assets if isinstance(a, dg.AssetsDefinition)
                     and dg.AssetKey("daily_events") in a.keys)
    assert daily_def.backfill_policy == dg.BackfillPolicy.single_run()
    assert set(daily_def.keys) == {dg.AssetKey("daily_events"), dg.AssetKey("daily_totals")}
    # the UI shows the partition variables each run binds, not the placeholder dates compilation renders
    spec = daily_def.specs_by_key[dg.AssetKey("daily_events")]
    shown = [spec.description or "", spec.metadata["sql"].value]
    assert all("{{ partition_start }}" in text and "1970" not in text for text in shown), shown


@pytest.mark.spark
def test_three_partition_backfill_in_one_run_then_one_partition_rerun(spark: Any, tmp_path: Path) -> None:
    root = project_root(tmp_path)
    defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
    job = defs.resolve_implicit_global_asset_job_def()
    keys = [dg.AssetKey("daily_events"), dg.AssetKey("daily_totals")]
    project, _ = load_project(root)
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(instance=instance, asset_selection=keys, tags=RANGE)
        assert result.success
        assert len(instance.get_runs()) == 1
        assert instance.get_materialized_partitions(dg.AssetKey("daily_totals")) == {
            "2026-01-02", "2026-01-03", "2026-01-04"}
        mat = instance.get_latest_materialization_event(dg.AssetKey("daily_events")).asset_materialization
        assert mat.metadata["partitions"].value == "2026-01-02, 2026-01-03, 2026-01-04"
        assert per_partition(instance, "daily_events") == {
            k: {"dagster/partition_row_count": 2, "rows_written": 2, "dagster/row_count": 6, "run_rows_written": 6,
                "streamt/partition_start": f"{k}T00:00:00+00:00", "streamt/partition_end": end}
            for k, end in [("2026-01-02", "2026-01-03T00:00:00+00:00"), ("2026-01-03", "2026-01-04T00:00:00+00:00"),
                           ("2026-01-04", "2026-01-05T00:00:00+00:00")]}
        assert "input_rows" not in mat.metadata and mat.metadata["run_input_rows"].value == 10  # the whole source
        totals = sorted(tuple(r) for r in spark.table(register_model_view(spark, project, "daily_totals")).collect())
        assert [t[1] for t in totals] == [41, 61, 81]

        (root / "data/events/late.json").write_text(json.dumps({"id": "3c", "ts": "2026-01-03T10:00:00Z",
                                                                "amount": 100}) + "\n")
        result = job.execute_in_process(instance=instance, asset_selection=keys, partition_key="2026-01-03")
        assert result.success
        totals = sorted(tuple(r) for r in spark.table(register_model_view(spark, project, "daily_totals")).collect())
        assert [t[1] for t in totals] == [41, 161, 81]
        ids = sorted(r[0] for r in spark.table(register_model_view(spark, project, "daily_events")).collect())
        assert ids == ["2a", "2b", "3a", "3b", "3c", "4a", "4b"]
        # each partition's figures are its own, as Delta holds them: 01-03 now 3 rows, the others untouched
        from pyspark.sql import functions as F

        rows = {k: v["dagster/partition_row_count"] for k, v in per_partition(instance, "daily_events").items()}
        assert rows == {"2026-01-02": 2, "2026-01-03": 3, "2026-01-04": 2}
        in_delta = spark.table(register_model_view(spark, project, "daily_events")).groupBy(
            F.date_format("ts", "yyyy-MM-dd").alias("k")).count().collect()
        assert rows == {r["k"]: r["count"] for r in in_delta}
        assert per_partition(instance, "daily_events")["2026-01-03"]["dagster/row_count"] == 7


def per_partition(instance: dg.DagsterInstance, asset: str) -> dict[str, dict[str, Any]]:
    """Each materialized partition's latest metadata as the UI's partition page shows it (timestamps as
    ISO dates, other values plain)."""
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(instance.get_materialized_partitions(dg.AssetKey(asset))):
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[key]), limit=1).records
        md = records[0].asset_materialization.metadata  # type: ignore[union-attr]
        out[key] = {name: datetime.fromtimestamp(v.value, tz=UTC).isoformat()
                    if isinstance(v, dg.TimestampMetadataValue) else v.value for name, v in md.items()
                    if name in ("dagster/partition_row_count", "rows_written", "dagster/row_count", "run_rows_written",
                                "streamt/partition_start", "streamt/partition_end")}
    return out


def test_streamt_run_leaves_partitioned_models_to_backfill(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["run", "-p", str(project_root(tmp_path)), "-s", "by_region"])
    assert out.exit_code == 0, out.output
    assert "note: partitioned model(s) by_region run per partition: `streamt backfill by_region" in out.output


def test_backfill_cli_errors(tmp_path: Path) -> None:
    root = str(project_root(tmp_path))
    cases = [
        (["overall", "--from", "2026-01-01", "--to", "2026-01-02"], "no partitioned model in 'overall'"),
        (["daily_events", "--from", "someday", "--to", "2026-01-02"], "'someday' is not a partition key or a date"),
        (["daily_events", "--from", "2027-01-01", "--to", "2027-01-02"], "no partition of daily_events"),
        (["by_region+", "daily_events", "--from", "x", "--to", "y"], "Got unexpected extra argument"),
        (["daily_events+ by_region", "--from", "eu", "--to", "us"], "mixes partitionings"),
        (["by_region", "--from", "eu", "--to", "apac"], "unknown partition 'apac'; the partitions are: eu, us"),
    ]
    for args, message in cases:
        out = CliRunner().invoke(cli, ["backfill", "-p", root, *args])
        assert out.exit_code == 2 and message in out.output, (args, out.output)


@pytest.mark.spark
def test_streamt_backfill_cli_runs_the_range_in_one_dagster_run(tmp_path: Path, streamt_here: StreamtHere) -> None:
    root = project_root(tmp_path)
    r = streamt_here("backfill", "daily_events+", "-p", str(root), "--from", "2026-01-02", "--to", "2026-01-04")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Backfilling 3 partition(s) 2026-01-02..2026-01-04 of daily_events, daily_totals in one run" in r.stdout
    assert "note: not partitioned, not backfilled: overall" in r.stdout
    assert "2/2 model(s) succeeded" in r.stdout

    with dg.DagsterInstance.from_config(str(root / ".streamt" / "dagster")) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1 and runs[0].is_success
        assert runs[0].tags["dagster/asset_partition_range_start"] == "2026-01-02"
        assert instance.get_materialized_partitions(dg.AssetKey("daily_events")) == {
            "2026-01-02", "2026-01-03", "2026-01-04"}
    events = [json.loads(line) for line in (root / ".streamt" / "openlineage.jsonl").read_text().splitlines()]
    nominal = {(e["run"]["facets"]["nominalTime"]["nominalStartTime"], e["run"]["facets"]["nominalTime"][
        "nominalEndTime"]) for e in events if e["eventType"] == "START" and "parent" not in e["run"]["facets"]}
    assert nominal == {("2026-01-02T00:00:00.000Z", "2026-01-05T00:00:00.000Z")}


@pytest.mark.spark
def test_partitioned_model_run_without_a_partition_fails_clearly(spark: Any, tmp_path: Path) -> None:
    root = project_root(tmp_path)
    defs = build_definitions(root, spark=SparkResource(project_dir=str(root), keep_alive=True))
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), asset_selection=[dg.AssetKey("daily_events")], raise_on_error=False)
    assert not result.success
    observed = [e.asset_observation_data.asset_observation.metadata for e in result.all_events
                if e.event_type == dg.DagsterEventType.ASSET_OBSERVATION]
    assert "`streamt backfill daily_events --from ... --to ...`" in observed[0]["error"].value


@pytest.mark.spark
def test_streamt_backfill_per_partition_makes_one_run_per_partition(tmp_path: Path, streamt_here: StreamtHere
                                                                   ) -> None:
    root = project_root(tmp_path)  # by_region has `backfill: per_partition`
    r = streamt_here("backfill", "by_region", "-p", str(root), "--from", "eu", "--to", "us")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Partition eu (1/2) of by_region" in r.stdout and "Partition us (2/2) of by_region" in r.stdout

    with dg.DagsterInstance.from_config(str(root / ".streamt" / "dagster")) as instance:
        runs = instance.get_runs()
        assert sorted(run.tags["dagster/partition"] for run in runs) == ["eu", "us"]
        assert all(run.is_success for run in runs)
        assert instance.get_materialized_partitions(dg.AssetKey("by_region")) == {"eu", "us"}
    data = root / ".streamt" / "warehouse" / "by_region" / "data"
    assert sorted(p.name for p in data.iterdir() if p.name.startswith("streamt_partition=")) == [
        "streamt_partition=eu"]  # the query only ever yields region 'eu': the 'us' partition stays empty
