"""JDBC sink into a real, throwaway PostgreSQL server (batch and streaming, with a replayed batch)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from dagster_streamt.spark import ProjectPaths, Warehouse
from dagster_streamt.spark.sinks.jdbc_tx import transaction

from .helpers import jsonl, rows, run
from .postgres import postgres_url, skip_without_postgres

skip_without_postgres()

pytestmark = pytest.mark.spark
__all__ = ["postgres_url"]  # the fixture


def _options(url: str, table: str) -> dict[str, str]:
    return {"url": url, "dbtable": table, "user": "postgres", "password": "unused",
            "driver": "org.postgresql.Driver"}


def _read(spark: Any, url: str, table: str) -> list[dict[str, Any]]:
    df = spark.read.format("jdbc").options(**_options(url, table)).load()
    return sorted((r.asDict() for r in df.collect()), key=lambda r: r["order_id"])


def test_batch_jdbc_sink(spark: Any, tmp_project: Any, postgres_url: str) -> None:
    project = tmp_project({
        "sources": [{"name": "raw", "format": "json", "path": "in",
                     "columns": [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]}],
        "models": [
            {"name": "orders", "materialized": "table", "sql": 'SELECT * FROM {{ source("raw") }}'},
            {"name": "to_pg", "from": "orders",
             "sink": {"format": "jdbc", "mode": "overwrite", "options": _options(postgres_url, "public.orders")}},
        ],
    }, {"in/a.json": jsonl([{"order_id": 1, "amount": 9.5}, {"order_id": 2, "amount": 3.0}])})
    result = run(spark, project)["to_pg"]
    assert result.ok, result.error
    assert result.rows_written == 2
    assert result.location == f"{postgres_url} table public.orders"
    assert _read(spark, postgres_url, "public.orders") == [{"order_id": 1, "amount": 9.5},
                                                             {"order_id": 2, "amount": 3.0}]


def test_streaming_jdbc_sink_skips_replayed_batch(spark: Any, tmp_project: Any, postgres_url: str) -> None:
    project = tmp_project({
        "sources": [{"name": "raw", "format": "json", "path": "in",
                     "columns": [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]}],
        "models": [
            {"name": "orders", "materialized": "stream", "sql": 'SELECT * FROM {{ source("raw") }}'},
            {"name": "to_pg", "from": "orders", "sink": {"format": "jdbc",
                                                         "options": _options(postgres_url, "stream_orders")}},
        ],
    }, {"in/a.json": jsonl([{"order_id": 1, "amount": 1.0}, {"order_id": 2, "amount": 2.0}])})
    assert run(spark, project)["to_pg"].ok
    commits = ProjectPaths.from_project(project).checkpoint("to_pg") / "commits"
    for name in ("0", ".0.crc"):  # crash after the write, before Spark's commit: batch 0 is replayed
        (commits / name).unlink(missing_ok=True)
    (project.root / "in" / "b.json").write_text(jsonl([{"order_id": 3, "amount": 3.0}]))
    time.sleep(0.01)
    second = run(spark, project)["to_pg"]
    assert second.ok, second.error
    assert (commits / "0").is_file()
    assert [r["order_id"] for r in _read(spark, postgres_url, "stream_orders")] == [1, 2, 3]


def test_jdbc_source(spark: Any, tmp_project: Any, postgres_url: str) -> None:
    spark.createDataFrame([(10, 1.5), (11, 2.5), (12, -1.0)], "order_id bigint, amount double") \
        .write.format("jdbc").options(**_options(postgres_url, "public.src_orders")).mode("overwrite").save()
    project = tmp_project({
        "sources": [{"name": "pg_orders", "format": "jdbc", "options": _options(postgres_url, "public.src_orders")}],
        "models": [{"name": "positive", "sql": 'SELECT order_id, amount FROM {{ source("pg_orders") }} '
                                               "WHERE amount > 0"}],
    })
    result = run(spark, project)["positive"]
    assert result.ok, result.error
    assert result.input_rows == 3 and result.rows_written == 2
    out = rows(spark, Warehouse.for_project(project).table_location("positive"))
    assert sorted(r["order_id"] for r in out) == [10, 11]


# -- replace, upsert, batch ids in the transaction ----------------------------------------------------------
COLS = [{"name": "order_id", "type": "bigint"}, {"name": "tier", "type": "string"},
        {"name": "amount", "type": "double"}]


def _orders(ids: range, bump: float = 0.0) -> str:
    return jsonl({"order_id": i, "tier": "abcd"[i % 4], "amount": i + bump} for i in ids)


def _sql(spark: Any, url: str, sql: str) -> list[tuple[Any, ...]]:
    """Run statements (autocommit off, committed at the end) and return the last query's rows."""
    with transaction(_options(url, "unused"), "test") as conn:
        out: list[tuple[Any, ...]] = []
        for stmt in sql.split(";"):
            if stmt.strip().upper().startswith("SELECT"):
                out = conn.rows(stmt)
            elif stmt.strip():
                conn.execute(stmt)
    return out


def _tiers(ids: list[int], bump: float = 0.0) -> list[tuple[str, float, int]]:
    agg: dict[str, tuple[float, int]] = {}
    for i in ids:
        total, n = agg.get("abcd"[i % 4], (0.0, 0))
        agg["abcd"[i % 4]] = (total + i + bump, n + 1)
    return sorted((t, v[0], v[1]) for t, v in agg.items())


def test_snapshot_jdbc_sink_replaces_in_one_transaction(spark: Any, tmp_project: Any, postgres_url: str) -> None:
    project = tmp_project({
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLS}],
        "models": [
            {"name": "revenue", "materialized": "table",
             "sql": 'SELECT tier, sum(amount) AS revenue, count(*) AS orders FROM {{ source("raw") }} GROUP BY tier'},
            {"name": "to_pg", "from": "revenue", "sink": {"format": "jdbc", "options": _options(postgres_url,
                                                                                               "public.revenue")}},
        ],
    }, {"in/a.json": _orders(range(8))})
    read = "SELECT tier, revenue, orders FROM public.revenue ORDER BY tier"
    assert run(spark, project)["to_pg"].ok
    assert _sql(spark, postgres_url, read) == _tiers(list(range(8)))
    _sql(spark, postgres_url, "CREATE VIEW public.revenue_a AS SELECT * FROM public.revenue WHERE tier = 'a'")

    expected = [_tiers(list(range(8)))]
    seen: list[list[tuple[Any, ...]]] = []
    stop = threading.Event()

    def poll() -> None:  # a reader on its own connection during the reruns
        while not stop.is_set():
            seen.append(_sql(spark, postgres_url, read))

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for k in range(1, 4):
            (project.root / "in" / f"m{k}.json").write_text(_orders(range(8 * k, 8 * k + 8)))
            result = run(spark, project)["to_pg"]
            assert result.ok and result.rows_written == 4, result.error
            expected.append(_tiers(list(range(8 * k + 8))))
    finally:
        stop.set()
        reader.join()
    assert _sql(spark, postgres_url, read) == expected[-1], "no duplicated snapshot"
    assert seen and all(s in expected for s in seen), "a reader saw an empty or half-replaced table"
    assert _sql(spark, postgres_url, "SELECT count(*) FROM public.revenue_a") == [(1,)], "dependent view kept"
    staging = _sql(spark, postgres_url, "SELECT count(*) FROM pg_tables WHERE tablename LIKE '%streamt_stage%'")
    assert staging == [(0,)]


def test_jdbc_upsert_by_model_key(spark: Any, tmp_project: Any, postgres_url: str) -> None:
    """streamt's `key: order_id` on the sink with `mode: upsert`: reruns update rows, never duplicate."""
    project = tmp_project({
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLS}],
        "models": [
            {"name": "latest", "materialized": "table", "sql": 'SELECT * FROM {{ source("raw") }}'},
            {"name": "to_pg", "from": "latest", "key": "order_id",
             "sink": {"format": "jdbc", "mode": "upsert", "options": _options(postgres_url, "upserted")}},
        ],
    }, {"in/a.json": _orders(range(5))})
    assert run(spark, project)["to_pg"].ok
    (project.root / "in" / "a.json").write_text(_orders(range(3, 7), bump=100))  # 3, 4 change; 5, 6 are new
    second = run(spark, project)["to_pg"]
    assert second.ok, second.error
    got = _sql(spark, postgres_url, "SELECT order_id, amount FROM upserted ORDER BY order_id")
    assert got == [(0, 0.0), (1, 1.0), (2, 2.0), (3, 103.0), (4, 104.0), (5, 105.0), (6, 106.0)]
    pk = _sql(spark, postgres_url, "SELECT count(*) FROM information_schema.table_constraints "
                                   "WHERE table_name = 'upserted' AND constraint_type = 'PRIMARY KEY'")
    assert pk == [(1,)], "a table the sink creates gets the key as its primary key"


def test_jdbc_upsert_into_table_without_unique_key_explains_the_fix(spark: Any, tmp_project: Any,
                                                                     postgres_url: str) -> None:
    _sql(spark, postgres_url, "CREATE TABLE nokey (order_id bigint, tier text, amount double precision);"
                              "INSERT INTO nokey VALUES (1, 'x', 1.0)")
    project = tmp_project({
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLS}],
        "models": [{"name": "to_pg", "materialized": "sink", "sql": 'SELECT * FROM {{ ref("t") }}',
                    "sink": {"format": "jdbc", "mode": "upsert", "key": ["order_id"],
                             "options": _options(postgres_url, "nokey")}},
                   {"name": "t", "materialized": "table", "sql": 'SELECT * FROM {{ source("raw") }}'}],
    }, {"in/a.json": _orders(range(3))})
    result = run(spark, project)["to_pg"]
    assert not result.ok
    assert "ALTER TABLE nokey ADD PRIMARY KEY (order_id)" in (result.error or ""), result.error
    assert _sql(spark, postgres_url, "SELECT count(*) FROM nokey") == [(1,)], "rolled back"


def test_streaming_jdbc_aggregate_upserts_and_records_batches(spark: Any, tmp_project: Any,
                                                               postgres_url: str) -> None:
    """Changing counts of a streaming aggregate, upserted per micro-batch; the batch id is committed with
    the rows, and a full refresh starts the table over instead of doubling it."""
    project = tmp_project({
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLS}],
        "models": [
            {"name": "orders", "materialized": "stream", "sql": 'SELECT * FROM {{ source("raw") }}'},
            {"name": "counts", "materialized": "sink", "key": "tier",
             "sql": 'SELECT tier, sum(amount) AS revenue, count(*) AS orders FROM {{ ref("orders") }} GROUP BY tier',
             "sink": {"format": "jdbc", "options": _options(postgres_url, "tier_counts")}},
            {"name": "log", "from": "orders", "sink": {"format": "jdbc", "options": _options(postgres_url, "log")}},
        ],
    }, {"in/a.json": _orders(range(6))})
    read = "SELECT tier, revenue, orders FROM tier_counts ORDER BY tier"
    assert all(r.ok for r in run(spark, project).values())
    assert _sql(spark, postgres_url, read) == _tiers(list(range(6)))
    (project.root / "in" / "b.json").write_text(_orders(range(6, 9)))
    assert all(r.ok for r in run(spark, project).values())
    assert _sql(spark, postgres_url, read) == _tiers(list(range(9)))
    commits = _sql(spark, postgres_url, "SELECT sink_id, batch_id FROM streamt_sink_commits "
                                            "WHERE sink_id IN ('counts -> tier_counts', 'log -> log') ORDER BY sink_id")
    assert commits == [("counts -> tier_counts", 1), ("log -> log", 1)]
    assert run(spark, project, ["log"], full_refresh=["log"])["log"].ok
    ids = [r[0] for r in _sql(spark, postgres_url, "SELECT order_id FROM log ORDER BY order_id")]
    assert ids == list(range(9)), "a full refresh restarted the table in its first batch"


def test_append_jdbc_snapshot_sink_is_a_history(spark: Any, tmp_project: Any, postgres_url: str) -> None:
    project = tmp_project({
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLS}],
        "models": [{"name": "t", "materialized": "table", "sql": 'SELECT * FROM {{ source("raw") }}'},
                   {"name": "hist", "from": "t", "sink": {"format": "jdbc", "mode": "append",
                                                          "options": _options(postgres_url, "hist")}}],
    }, {"in/a.json": _orders(range(3))})
    run(spark, project)
    run(spark, project)
    assert _sql(spark, postgres_url, "SELECT count(*) FROM hist") == [(6,)]
