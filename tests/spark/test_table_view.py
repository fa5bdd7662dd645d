"""Batch models: tables replace atomically, views store nothing and are recreated when read later."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import Warehouse, register_model_view

from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

ORDERS = [
    {"order_id": 1, "customer": "ann", "amount": 10.0, "ts": "2024-01-01T00:00:00Z"},
    {"order_id": 2, "customer": "bob", "amount": -5.0, "ts": "2024-01-01T00:01:00Z"},
    {"order_id": 3, "customer": "ann", "amount": 7.5, "ts": "2024-01-01T00:02:00Z"},
]
COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "customer", "type": "string"},
           {"name": "amount", "type": "double"}, {"name": "ts", "type": "timestamp"}]


def shop(tmp_project: Any, fmt: str = "delta", **extra: Any) -> Any:
    config = {
        "sources": [{"name": "orders_raw", "format": "json", "path": "data/orders", "columns": COLUMNS}],
        "models": [
            {"name": "orders_clean", "materialized": "table",
             "advanced": {"spark": {"partition_by": ["customer"], "format": fmt}},
             "sql": 'SELECT order_id, customer, amount FROM {{ source("orders_raw") }} WHERE amount > 0'},
            {"name": "big_orders", "materialized": "view",
             "sql": 'SELECT order_id, amount FROM {{ ref("orders_clean") }} WHERE amount > 8'},
            {"name": "big_order_count", "materialized": "table",
             "sql": 'SELECT count(*) AS n, sum(amount) AS total FROM {{ ref("big_orders") }}'},
        ],
        **extra,
    }
    return tmp_project(config, {"data/orders/part1.json": jsonl(ORDERS)})


def test_table_is_replaced_atomically(spark: Any, tmp_project: Any) -> None:
    """The default format: each refresh is one Delta commit in the model's data folder."""
    project = shop(tmp_project)
    wh = Warehouse.for_project(project)
    first = run(spark, project, ["orders_clean"])["orders_clean"]
    assert first.ok, first.error
    assert first.rows_written == 2 and first.input_rows == 3 and first.delta_version == 0
    assert ("order_id", "bigint") in first.schema
    data = wh.table_location("orders_clean")
    assert data == wh.data_dir("orders_clean") and data.is_relative_to(project.root)
    got = sorted((r["order_id"], r["customer"]) for r in rows(spark, data))
    assert got == [(1, "ann"), (3, "ann")]
    assert (data / "customer=ann").is_dir()  # partition_by

    same = run(spark, project, ["orders_clean"])["orders_clean"]  # nothing new: no commit
    assert same.ok and same.refresh == "unchanged" and same.delta_version == 0

    (project.root / "data" / "orders" / "part2.json").write_text(jsonl([dict(ORDERS[0], order_id=9)]))
    second = run(spark, project, ["orders_clean"])["orders_clean"]
    assert second.ok and second.refresh == "append" and second.delta_version == 1
    assert sorted(r["order_id"] for r in rows(spark, data)) == [1, 3, 9]
    old = spark.read.format("delta").option("versionAsOf", 0).load(str(data))
    assert sorted(r["order_id"] for r in old.collect()) == [1, 3]  # the previous version, intact
    assert not list(data.parent.glob("v=*")) and not (data.parent / "_CURRENT").exists()


def test_a_plain_file_format_is_stored_as_delta_with_a_note(spark: Any, tmp_project: Any) -> None:
    """``format: parquet`` (the layout of older releases) is accepted: the table is a Delta table (its
    data files are Parquet) and validation says how to get plain files (a file export)."""
    from dagster_streamt.api import load

    project = shop(tmp_project, fmt="parquet")
    notes = [d for d in load(project.root, use_cache=False).diagnostics if d.code == "STR090"]
    assert len(notes) == 1 and "orders_clean" in notes[0].message and "sink" in (notes[0].hint or "")
    first = run(spark, project, ["orders_clean"])["orders_clean"]
    assert first.ok and first.delta_version == 0, first.error
    data = Warehouse.for_project(project).data_dir("orders_clean")
    assert sorted(r["order_id"] for r in rows(spark, data, "delta")) == [1, 3]


def test_view_feeds_downstream_in_the_same_run_and_later(spark: Any, tmp_project: Any) -> None:
    project = shop(tmp_project)
    results = run(spark, project)
    assert [r.status for r in results.values()] == ["success"] * 3, [r.error for r in results.values()]
    view = results["big_orders"]
    assert view.rows_written is None and view.location is None
    assert not Warehouse.for_project(project).model_dir("big_orders").exists()  # no storage at all
    count = rows(spark, Warehouse.for_project(project).table_location("big_order_count"))
    assert count == [{"n": 1, "total": 10.0}]

    # A later run (another process would have no temp views at all) renders the view again from the project.
    spark.catalog.dropTempView("big_orders")
    spark.catalog.dropTempView("orders_clean")
    again = run(spark, project, ["big_order_count"])["big_order_count"]
    assert again.ok, again.error
    assert spark.table(f"`{register_model_view(spark, project, 'big_orders')}`").collect()[0]["order_id"] == 1


def test_selected_model_reads_unmaterialized_input_clearly(spark: Any, tmp_project: Any) -> None:
    project = shop(tmp_project)
    result = run(spark, project, ["big_order_count"])["big_order_count"]
    assert result.status == "failed"  # big_orders is a view (no storage): what is missing is the table it reads
    assert "input model orders_clean has not been materialized yet" in result.error
    assert "streamt run -s orders_clean" in result.error


def test_environment_dotenv_reaches_the_spark_run(spark: Any, tmp_path: Any, monkeypatch: Any) -> None:
    """A variable from `.env.<env>` renders the same at run time as at validate time."""
    from dagster_streamt.spec.loader import load_project

    from ..conftest import write_project

    monkeypatch.delenv("REGION", raising=False)
    root = write_project(tmp_path / "envproj", {
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": [{"name": "id", "type": "bigint"}]}],
        "models": [{"name": "tagged",
                    "sql": "SELECT id, '{{ env_var(\"REGION\") }}' AS region FROM {{ source(\"raw\") }}"}],
    }, {"in/a.json": '{"id": 1}\n', ".env": "REGION=default\n", ".env.prod": "REGION=eu\n",
        "environments/prod.yml": "vars: {}\n"})
    project, diags = load_project(root, env="prod")
    assert project is not None and not diags.has_errors
    result = run(spark, project)["tagged"]
    assert result.ok, result.error
    assert rows(spark, Warehouse.for_project(project).table_location("tagged")) == [{"id": 1, "region": "eu"}]
