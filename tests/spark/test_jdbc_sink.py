"""JDBC sink into a real, throwaway PostgreSQL server (batch and streaming, with a replayed batch)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import ProjectPaths, Warehouse

from ..conftest import POSTGRES_JAR
from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    return Path(which).parent if which else None


PG_BIN = _pg_bin()
if not POSTGRES_JAR.is_file() or PG_BIN is None:
    pytest.skip(f"needs {POSTGRES_JAR} and a pg_ctl binary: apt-get install -y postgresql libpostgresql-jdbc-java",
                allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """Start PostgreSQL in a temp dir on a free port (as the postgres user when we are root)."""
    assert PG_BIN is not None
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    base = Path(tempfile.mkdtemp(prefix="streamt-pg-"))
    if as_user:
        shutil.chown(base, "postgres", "postgres")
    data, port = base / "data", _free_port()

    def pg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*as_user, *args], capture_output=True, text=True, timeout=120, check=True)

    try:
        pg(str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        pg(str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "start", "-o",
           f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off")
        yield f"jdbc:postgresql://127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run([*as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                           capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


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
