"""Row counts: a count Spark did not return is unknown (None), never 0 rows, from the result to the
Dagster metadata and the CLI's summary."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import Observation

from dagster_streamt.dagster.result_metadata import result_metadata
from dagster_streamt.spark import Warehouse

from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "kind", "type": "string"}]


def events(tmp_project: Any, records: list[dict[str, Any]]) -> Any:
    return tmp_project({"sources": [{"name": "events", "format": "json", "path": "data", "columns": COLUMNS}],
                        "models": [{"name": "copy", "sql": 'SELECT id, kind FROM {{ source("events") }}'}]},
                       {"data/a.json": jsonl(records)})


def test_a_count_that_did_not_come_back_is_unknown(spark: Any, tmp_project: Any, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from dagster_streamt.cli.dagster_exec import _summary

    project = events(tmp_project, [{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}, {"id": 3, "kind": "a"}])
    real = Observation.get

    def no_table_count(self: Observation) -> dict[str, Any]:  # the write ran, its count never came back
        return {} if str(getattr(self, "_name", "")).startswith("streamt_table_") else real.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(Observation, "get", property(no_table_count))
    result = run(spark, project)["copy"]
    assert result.ok, result.error
    location = Warehouse.for_project(project).table_location("copy")
    assert location is not None and len(rows(spark, location)) == 3
    assert result.rows_written is None
    md = result_metadata(result)
    assert md["rows_written"] == "unknown" and md.get("dagster/row_count") != 0
    assert result.table_rows == 3 == md["dagster/row_count"]  # the table's size, from its Parquet footers

    _summary(["copy"], [result], 1.0, "r1")
    line = next(ln.split() for ln in capsys.readouterr().out.splitlines() if ln.startswith("copy"))
    assert line[:3] == ["copy", "success", "unknown"]


def test_a_stream_batch_without_its_count_makes_the_total_unknown() -> None:
    from types import SimpleNamespace

    from dagster_streamt.spark.run.output import OUT_METRIC
    from dagster_streamt.spark.run.progress import summarize

    def batch(rows_in: int, written: int | None) -> Any:
        metrics = {OUT_METRIC: {"rows": written}} if written is not None else {}
        return SimpleNamespace(numInputRows=rows_in, observedMetrics=metrics, eventTime={}, inputRowsPerSecond=1.0,
                               processedRowsPerSecond=1.0, timestamp="2026-01-01T00:00:00.000Z", durationMs={})

    assert summarize([batch(3, 3), batch(0, None), batch(2, 2)], OUT_METRIC).rows_written == 5
    assert summarize([batch(3, 3), batch(2, None)], OUT_METRIC).rows_written is None  # not 3
    assert summarize([], OUT_METRIC).rows_written == 0  # nothing new: a known 0
