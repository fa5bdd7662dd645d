"""JDBC sinks through a Spark Connect client, which has no JVM: the publish transaction is the run's own
Python database connection, so snapshot replace, upsert by key and streaming batch ids behave as with
the embedded session (tests/spark/test_jdbc_sink.py), and errors name the same fixes.

One Connect server for the module (PostgreSQL's JDBC jar on its classpath), stopped at the end. Each
run is a fresh client process (tests/spark/proc_worker.py) whose project names the server with
``runtime.spark.remote``: this pytest process holds the suite's shared embedded session, and pyspark
switches a process's ``pyspark.sql.functions`` to Connect once it opens a Connect session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import ProjectPaths, SparkSettings
from dagster_streamt.spark.session.connect_server import port_open, start_server_process
from dagster_streamt.spark.session.settings import session_conf
from dagster_streamt.spark.sinks.jdbc_tx import transaction

from ..conftest import POSTGRES_JAR, load, write_project
from .helpers import jsonl
from .postgres import _free_port, postgres_url, skip_without_postgres

skip_without_postgres()
pytestmark = pytest.mark.spark
__all__ = ["postgres_url"]  # the fixture

REPO = Path(__file__).resolve().parents[2]
COLS = [{"name": "order_id", "type": "bigint"}, {"name": "tier", "type": "string"},
        {"name": "amount", "type": "double"}]


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        children.setdefault(int(text[text.rindex(")") + 2:].split()[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server of the module's own, started with pyspark's script like a project's."""
    root = tmp_path_factory.mktemp("connect")
    project = load(write_project(root / "server", {}))
    settings = SparkSettings.from_project(project, master="local[2]", conf={  # Delta's jars join these
        "spark.jars": str(POSTGRES_JAR), "spark.sql.shuffle.partitions": "2"})
    conf = session_conf(project, settings)
    port = _free_port()
    pid = start_server_process(project, settings, conf, port, root / "state")
    try:
        yield f"sc://localhost:{port}"
    finally:
        tree = {pid, *_descendants(pid)}
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while (any(_alive(p) for p in tree) or port_open(port)) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = [p for p in tree if _alive(p)]
        for p in left:
            os.kill(p, signal.SIGKILL)
        assert not left, "the Connect server (or a worker of it) outlived SIGTERM"
        assert not port_open(port), f"port {port} still answers"


def _options(url: str, table: str) -> dict[str, str]:
    return {"url": url, "dbtable": table, "user": "postgres", "password": "unused",
            "driver": "org.postgresql.Driver"}


def _sql(url: str, sql: str) -> list[tuple[Any, ...]]:
    """Statements on a connection of this process (no Spark); the last query's rows."""
    out: list[tuple[Any, ...]] = []
    with transaction(_options(url, "unused"), "test") as conn:
        for stmt in sql.split(";"):
            if stmt.strip().upper().startswith("SELECT"):
                out = conn.rows(stmt)
            elif stmt.strip():
                conn.execute(stmt)
    return out


def _orders(ids: range, bump: float = 0.0) -> str:
    return jsonl({"order_id": i, "tier": "abcd"[i % 4], "amount": i + bump} for i in ids)


def _project(tmp_path: Path, remote: str, models: list[dict[str, Any]], files: dict[str, str]) -> Path:
    return write_project(tmp_path / "proj", {
        "runtime": {"spark": {"remote": remote}},
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLS}],
        "models": models,
    }, files)


def _run(root: Path) -> dict[str, list[Any]]:
    """Run every model in a Connect client process: {model: [status, rows written, error]}."""
    proc = subprocess.run([sys.executable, "-m", "tests.spark.proc_worker", str(root), "-",
                           *load(root).models], cwd=REPO, capture_output=True, text=True, timeout=300)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert lines[0]["connect"], "the run was not a Spark Connect client"
    return next(line["results"] for line in lines if "results" in line)


def _ok(results: dict[str, list[Any]]) -> None:
    assert all(r[0] == "success" for r in results.values()), results


def _tiers(ids: list[int]) -> list[tuple[str, float, int]]:
    agg: dict[str, tuple[float, int]] = {}
    for i in ids:
        total, n = agg.get("abcd"[i % 4], (0.0, 0))
        agg["abcd"[i % 4]] = (total + i, n + 1)
    return sorted((t, v[0], v[1]) for t, v in agg.items())


def test_connect_snapshot_sink_replaces(tmp_path: Path, connect_url: str, postgres_url: str) -> None:
    root = _project(tmp_path, connect_url, [
        {"name": "revenue", "materialized": "table",
         "sql": 'SELECT tier, sum(amount) AS revenue, count(*) AS orders FROM {{ source("raw") }} GROUP BY tier'},
        {"name": "to_pg", "from": "revenue", "sink": {"format": "jdbc",
                                                      "options": _options(postgres_url, "c_revenue")}},
    ], {"in/a.json": _orders(range(8))})
    read = "SELECT tier, revenue, orders FROM c_revenue ORDER BY tier"
    _ok(_run(root))
    assert _sql(postgres_url, read) == _tiers(list(range(8)))
    (root / "in" / "b.json").write_text(_orders(range(8, 14)))
    results = _run(root)
    _ok(results)
    assert results["to_pg"][1] == 4
    assert _sql(postgres_url, read) == _tiers(list(range(14))), "replaced, not appended"
    assert _sql(postgres_url, "SELECT count(*) FROM pg_tables WHERE tablename LIKE '%streamt_stage%'") == [(0,)]


def test_connect_upsert_by_key_twice(tmp_path: Path, connect_url: str, postgres_url: str) -> None:
    root = _project(tmp_path, connect_url, [
        {"name": "latest", "materialized": "table", "sql": 'SELECT * FROM {{ source("raw") }}'},
        {"name": "to_pg", "from": "latest", "key": "order_id",
         "sink": {"format": "jdbc", "mode": "upsert", "options": _options(postgres_url, "c_upserted")}},
    ], {"in/a.json": _orders(range(5))})
    _ok(_run(root))
    (root / "in" / "a.json").write_text(_orders(range(3, 7), bump=100))  # 3, 4 change; 5, 6 are new
    time.sleep(0.01)
    _ok(_run(root))
    got = _sql(postgres_url, "SELECT order_id, amount FROM c_upserted ORDER BY order_id")
    assert got == [(0, 0.0), (1, 1.0), (2, 2.0), (3, 103.0), (4, 104.0), (5, 105.0), (6, 106.0)]
    pk = _sql(postgres_url, "SELECT count(*) FROM information_schema.table_constraints "
                            "WHERE table_name = 'c_upserted' AND constraint_type = 'PRIMARY KEY'")
    assert pk == [(1,)], "a table the sink creates gets the key as its primary key"


def test_connect_streaming_sink_skips_replayed_batch(tmp_path: Path, connect_url: str, postgres_url: str) -> None:
    root = _project(tmp_path, connect_url, [
        {"name": "orders", "materialized": "stream", "sql": 'SELECT * FROM {{ source("raw") }}'},
        {"name": "to_pg", "from": "orders", "sink": {"format": "jdbc",
                                                     "options": _options(postgres_url, "c_stream")}},
    ], {"in/a.json": _orders(range(1, 3))})
    _ok(_run(root))
    commits = ProjectPaths.from_project(load(root)).checkpoint("to_pg") / "commits"
    for name in ("0", ".0.crc"):  # crash after the publish, before Spark's commit: batch 0 is replayed
        (commits / name).unlink(missing_ok=True)
    (root / "in" / "b.json").write_text(_orders(range(3, 4)))
    time.sleep(0.01)
    _ok(_run(root))
    assert (commits / "0").is_file()
    assert [r[0] for r in _sql(postgres_url, "SELECT order_id FROM c_stream ORDER BY order_id")] == [1, 2, 3]
    ledger = _sql(postgres_url, "SELECT batch_id FROM streamt_sink_commits WHERE sink_id = 'to_pg -> c_stream'")
    assert ledger == [(1,)], "the batch id is committed with the rows"


def test_connect_upsert_into_table_without_unique_key_explains_the_fix(tmp_path: Path, connect_url: str,
                                                                         postgres_url: str) -> None:
    _sql(postgres_url, "CREATE TABLE c_nokey (order_id bigint, tier text, amount double precision);"
                       "INSERT INTO c_nokey VALUES (1, 'x', 1.0)")
    root = _project(tmp_path, connect_url, [
        {"name": "t", "materialized": "table", "sql": 'SELECT * FROM {{ source("raw") }}'},
        {"name": "to_pg", "materialized": "sink", "sql": 'SELECT * FROM {{ ref("t") }}',
         "sink": {"format": "jdbc", "mode": "upsert", "key": ["order_id"],
                  "options": _options(postgres_url, "c_nokey")}},
    ], {"in/a.json": _orders(range(3))})
    status, _, error = _run(root)["to_pg"]
    assert status != "success"
    assert "ALTER TABLE c_nokey ADD PRIMARY KEY (order_id)" in (error or ""), error
    assert _sql(postgres_url, "SELECT count(*) FROM c_nokey") == [(1,)], "rolled back"


def test_connect_keyed_table_upserts_with_merge_in_its_own_session(tmp_path: Path, connect_url: str) -> None:
    """A keyed table's MERGE runs in a cloned Connect session (its commit carries the refresh record)
    and a key fault reaches the client as the located error."""
    from deltalake import DeltaTable

    root = _project(tmp_path, connect_url, [
        {"name": "latest", "materialized": "table", "key": "order_id",
         "sql": 'SELECT order_id, tier, amount FROM {{ source("raw") }}'},
    ], {"in/a.json": _orders(range(0, 8, 2))})
    _ok(_run(root))
    (root / "in" / "b.json").write_text(_orders(range(1, 5, 2)))  # new keys among the stored ones: a MERGE
    second = _run(root)["latest"]
    assert second[:2] == ["success", 2], second
    table = Path(str(ProjectPaths.from_project(load(root)).warehouse)) / "latest" / "data"
    delta = DeltaTable(str(table))
    assert delta.history(1)[0]["operation"] == "MERGE" and "userMetadata" in delta.history(1)[0]
    assert sorted(r["order_id"] for r in delta.to_pyarrow_table().to_pylist()) == [0, 1, 2, 3, 4, 6]
    (root / "in" / "c.json").write_text(_orders(range(3, 4), bump=1))  # a known key, no event time
    failed = _run(root)["latest"]
    assert failed[0] == "failed" and "has the key (order_id=3) of a row already in the table" in failed[2]
    assert DeltaTable(str(table)).version() == delta.version()
