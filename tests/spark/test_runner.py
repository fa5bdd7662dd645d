"""The runner: a failed model skips exactly its downstream models; everything else still runs."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import run_models

from .helpers import jsonl, plan

pytestmark = pytest.mark.spark


def test_failure_skips_exactly_its_downstream(spark: Any, tmp_project: Any) -> None:
    def table(name: str, sql: str) -> dict[str, str]:
        return {"name": name, "materialized": "table", "sql": sql}

    project = tmp_project({
        "sources": [{"name": "events", "format": "json", "path": "events.json",
                     "columns": [{"name": "id", "type": "bigint"}, {"name": "kind", "type": "string"}]}],
        "models": [
            table("base", 'SELECT id, kind FROM {{ source("events") }}'),
            table("broken", 'SELECT no_such_column FROM {{ source("events") }}'),
            table("after_broken", 'SELECT * FROM {{ ref("broken") }}'),
            table("after_after", 'SELECT * FROM {{ ref("after_broken") }}'),
            table("mixed", 'SELECT b.id FROM {{ ref("base") }} b JOIN {{ ref("broken") }} x ON true'),
            table("kinds", 'SELECT kind, count(*) AS n FROM {{ ref("base") }} GROUP BY kind'),
            {"name": "ids", "materialized": "view", "sql": 'SELECT id FROM {{ ref("base") }}'},
        ],
    }, {"events.json": jsonl([{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}, {"id": 3, "kind": "a"}])})
    models, levels, ups = plan(project)
    order = [r for r in run_models(spark, project, models, levels, ups)]
    results = {r.model: r for r in order}
    assert len(order) == len(models)
    assert {n: r.status for n, r in results.items()} == {
        "base": "success", "broken": "failed", "after_broken": "skipped", "after_after": "skipped",
        "mixed": "skipped", "kinds": "success", "ids": "success"}
    assert results["broken"].error.startswith("model broken: [UNRESOLVED_COLUMN")
    assert "\n" not in results["broken"].error and "at org.apache" not in results["broken"].error
    assert results["after_after"].error == "skipped: upstream model broken failed"
    assert results["kinds"].rows_written == 2 and results["kinds"].input_rows == 3
    assert order.index(results["kinds"]) > order.index(results["base"])


def test_transient_error_retry_keeps_the_full_refresh(spark: Any, tmp_project: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_streamt.spark import Warehouse, runner

    project = tmp_project({
        "sources": [{"name": "events", "format": "json", "path": "events.json",
                     "columns": [{"name": "id", "type": "bigint"}, {"name": "kind", "type": "string"}]}],
        "models": [{"name": "base", "materialized": "table", "sql": 'SELECT id, kind FROM {{ source("events") }}'}],
    }, {"events.json": jsonl([{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}, {"id": 3, "kind": "a"}])})
    models, levels, ups = plan(project)
    assert all(r.ok for r in run_models(spark, project, models, levels, ups))
    # nothing changed, so only the full refresh asked for rebuilds (and says so)

    real = runner.MATERIALIZERS["table"]
    calls: list[bool] = []

    failures = 3

    def flaky(ctx: Any, model: Any, full_refresh: bool) -> Any:
        calls.append(full_refresh)
        if len(calls) <= failures:
            raise RuntimeError("Python worker failed to connect back.")
        return real(ctx, model, full_refresh)

    monkeypatch.setitem(runner.MATERIALIZERS, "table", flaky)
    monkeypatch.setattr(runner, "RETRY_WAITS_S", (0.01, 0.01))
    # three failures in a row: two retries, then the error stands
    result, = run_models(spark, project, models, levels, ups, {"base"})
    assert not result.ok and "Python worker failed to connect back" in (result.error or "")
    assert calls == [True, True, True]
    # two failures: the second retry runs the model, still as the full refresh asked for
    calls.clear()
    failures = 2
    result, = run_models(spark, project, models, levels, ups, {"base"})
    assert result.ok, result.error
    assert calls == [True, True, True]
    assert result.refresh == "full" and result.refresh_note == "full refresh requested"
    location = Warehouse.for_project(project).table_location("base")
    assert sorted((r["id"], r["kind"]) for r in spark.read.format("delta").load(str(location)).collect()) == [
        (1, "a"), (2, "b"), (3, "a")]
