"""A join of two streams without a time bound is a Flink job in streamt, which writes its topic; Spark
runs it as a table recomputed each run (issue 26), and that table publishes its whole current result to
the model's topic each run, so the topic's consumers keep receiving it (read as an upsert topic)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.api import load

from .helpers import jsonl, run

pytestmark = pytest.mark.spark

CONFIG = {
    "runtime": {"kafka": {"bootstrap_servers": "localhost:9092", "local_dir": "topics"}},
    "sources": [
        {"name": "orders", "topic": "orders", "columns": [{"name": "order_id", "type": "bigint"},
                                                         {"name": "amount", "type": "double"}]},
        {"name": "payments", "topic": "payments", "columns": [{"name": "order_id", "type": "bigint"},
                                                             {"name": "method", "type": "string"}]},
    ],
    "models": [{"name": "paid_orders", "key": "order_id",
                "sql": 'SELECT o.order_id, o.amount, p.method FROM {{ source("orders") }} o '
                       'JOIN {{ source("payments") }} p ON o.order_id = p.order_id'}],
}


def published(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted((root / "topics" / "paid_orders").glob("*.json"))
            for line in f.read_text().splitlines()]


def test_an_unbounded_stream_join_runs_as_a_table_and_publishes_its_topic(spark: Any, tmp_project: Any) -> None:
    files = {"topics/orders/a.json": jsonl({"order_id": i, "amount": i * 2.0} for i in range(4)),
             "topics/payments/a.json": jsonl({"order_id": i, "method": "card"} for i in (1, 3))}
    project = load(tmp_project(CONFIG, files).root).project  # compiled: materializations inferred
    assert project.models["paid_orders"].materialized == "table"  # inferred: Spark recomputes it
    result = run(spark, project)["paid_orders"]
    assert result.ok, result.error
    assert result.topic == "paid_orders" and result.topic_rows == 2
    root = project.root
    assert sorted((r["order_id"], r["method"]) for r in published(root)) == [(1, "card"), (3, "card")]

    (root / "topics" / "payments" / "b.json").write_text(jsonl([{"order_id": 2, "method": "cash"}]))
    result = run(spark, project)["paid_orders"]
    assert result.ok and result.topic_rows == 3
    # a topic is a log: each run appends its snapshot, and the latest record per key is the current result
    assert Counter((r["order_id"], r["method"]) for r in published(root)) == {
        (1, "card"): 2, (3, "card"): 2, (2, "cash"): 1}
