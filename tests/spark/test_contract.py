"""streamt's enforced model contract, checked on the schema each run produces: a missing, extra or
retyped column fails the model with the contract's file:line, and its downstream is skipped."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import run_models

from .helpers import jsonl, plan

pytestmark = pytest.mark.spark

CONTRACT = {"enforced": True, "columns": [{"name": "id", "type": "BIGINT", "nullable": False},
                                          {"name": "kind", "type": "STRING"}]}


def test_enforced_contract_fails_the_model_naming_column_and_line(spark: Any, tmp_project: Any) -> None:
    def model(name: str, sql: str, contract: dict[str, Any] | None = CONTRACT) -> dict[str, Any]:
        return {"name": name, "materialized": "table", "sql": sql, **({"contract": contract} if contract else {})}

    project = tmp_project({
        "sources": [{"name": "events", "format": "json", "path": "events.json",
                     "columns": [{"name": "id", "type": "bigint"}, {"name": "kind", "type": "string"}]}],
        "models": [
            model("kept", 'SELECT id, kind FROM {{ source("events") }}'),
            model("retyped", 'SELECT CAST(id AS STRING) AS id, kind FROM {{ source("events") }}'),
            model("narrowed", 'SELECT id FROM {{ source("events") }}'),
            model("widened", 'SELECT id, kind, 1 AS extra FROM {{ source("events") }}'),
            model("loose", 'SELECT id FROM {{ source("events") }}', {"enforced": False, "columns": [{"name": "x"}]}),
            model("after", 'SELECT * FROM {{ ref("retyped") }}', None),
        ],
    }, {"events.json": jsonl([{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}])})
    models, levels, ups = plan(project)
    results = {r.model: r for r in run_models(spark, project, models, levels, ups)}
    assert {n: r.status for n, r in results.items()} == {
        "kept": "success", "retyped": "failed", "narrowed": "failed", "widened": "failed", "loose": "success",
        "after": "skipped"}
    loc = project.locations[("model", "retyped")]
    error = results["retyped"].error or ""
    assert error.startswith(f"model retyped breaks its enforced contract ({loc.file}:{loc.line_of('contract')})")
    assert f"column 'id' is string, the contract ({loc.file}:{loc.line_of('contract', 'columns', 0)}) says BIGINT" \
        in error
    assert "column 'kind' (" in (results["narrowed"].error or "") and "is missing" in (results["narrowed"].error or "")
    assert "'extra' not declared in the contract" in (results["widened"].error or "")
