"""`kill -9` of a whole `streamt run` (Python, JVM and workers: its process group) at chosen points, then
more data and a rerun (the runs nobody kills run in the test's process, on the shared session); and two
`streamt run` at once. Every output - warehouse table, file exports,
PostgreSQL tables - is compared with values computed here in plain Python.

The kill points: during start (a JVM of the run exists), during the stream (a new offsets file), during
the Delta write of the table (a new data file of it exists: the commit is a few milliseconds away, so the
kill lands before or after it), and - with the run started through tests/spark/crash_launcher.py, which
wraps the product function that runs next so that the run pauses exactly there - between an aggregation
state's MERGE and the table's commit, a file export swap and a JDBC commit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagster_streamt.spark.sinks.jdbc_tx import transaction

from ..conftest import POSTGRES_JAR, StreamtHere
from .helpers import jsonl
from .kill import group_members, kill_group_when
from .postgres import postgres_url, skip_without_postgres

skip_without_postgres()
pytestmark = [pytest.mark.spark, pytest.mark.slow]
__all__ = ["postgres_url"]  # the fixture

REPO = Path(__file__).resolve().parents[2]
COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "tier", "type": "string"},
           {"name": "amount", "type": "double"}]
REVENUE = 'SELECT tier, sum(amount) AS revenue, count(*) AS orders FROM {{ ref("orders") }} GROUP BY tier'


def _pg(url: str, table: str) -> dict[str, str]:
    return {"url": url, "dbtable": table, "user": "postgres", "password": "unused", "driver": "org.postgresql.Driver"}


def write_project(root: Path, url: str, prefix: str) -> None:
    config = {
        "project": {"name": "crash"},
        "runtime": {"spark": {"master": "local[2]",
                              "conf": {"spark.jars": str(POSTGRES_JAR), "spark.sql.shuffle.partitions": "2"}}},
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": COLUMNS}],
        "models": [
            {"name": "orders", "materialized": "stream", "sql": 'SELECT * FROM {{ source("orders_raw") }}'},
            {"name": "revenue", "materialized": "table", "sql": REVENUE},
            {"name": "revenue_json", "from": "revenue", "sink": {"format": "json", "path": "exports/revenue"}},
            {"name": "revenue_pg", "from": "revenue", "key": "tier",
             "sink": {"format": "jdbc", "options": _pg(url, f"{prefix}_revenue")}},
            {"name": "orders_json", "from": "orders", "sink": {"format": "json", "path": "exports/orders"}},
            {"name": "orders_pg", "from": "orders",
             "sink": {"format": "jdbc", "options": _pg(url, f"{prefix}_orders")}},
        ],
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def add_orders(root: Path, name: str, ids: range) -> None:
    (root / "in").mkdir(exist_ok=True)
    tmp = root / "in" / f".{name}.tmp"
    tmp.write_text(jsonl({"order_id": i, "tier": "abcd"[i % 4], "amount": i * 1.25} for i in ids))
    tmp.rename(root / "in" / f"{name}.json")  # a source file appears whole


def revenue_of(ids: list[int]) -> dict[str, tuple[float, int]]:
    out: dict[str, tuple[float, int]] = {}
    for i in ids:
        total, n = out.get("abcd"[i % 4], (0.0, 0))
        out["abcd"[i % 4]] = (total + i * 1.25, n + 1)
    return out


def streamt(root: Path, *args: str, pause: tuple[str, Path] | None = None) -> subprocess.Popen[str]:
    """`streamt run` in its own process group (start_new_session), as a shell would start it; with
    ``pause=(point, folder)`` it pauses at that point (tests/spark/crash_launcher.py)."""
    command = ["-m", "tests.spark.crash_launcher", pause[0], str(pause[1])] if pause else ["-m", "dagster_streamt.cli"]
    return subprocess.Popen([sys.executable, *command, "run", "-p", str(root), *args],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


class Outputs:
    """Reads every output of the project, the way its consumers would."""

    def __init__(self, spark: Any, root: Path, url: str, prefix: str) -> None:
        self.spark, self.root, self.url, self.prefix = spark, root, url, prefix

    def sql(self, query: str) -> list[tuple[Any, ...]]:
        with transaction(_pg(self.url, "unused"), "test") as conn:
            return conn.rows(query)

    def pg_tables(self) -> set[str]:
        return {r[0] for r in self.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}

    def json_export(self, name: str) -> list[dict[str, Any]]:
        folder = self.root / "exports" / name
        if not folder.exists():
            return []
        return [json.loads(line) for f in sorted(folder.glob("*.json")) for line in f.read_text().splitlines()]

    def table_dir(self, model: str) -> Path:
        return self.root / ".streamt" / "warehouse" / model / "data"

    def revenue_table(self) -> dict[str, tuple[float, int]]:
        df = self.spark.read.format("delta").load(str(self.table_dir("revenue")))
        return {r["tier"]: (r["revenue"], r["orders"]) for r in df.collect()}

    def snapshot(self) -> dict[str, Any]:
        """Every output; asserts what must hold at any moment (no duplicate, nothing half-written)."""
        tables = self.pg_tables()
        rev_pg = self.sql(f"SELECT tier, revenue, orders FROM {self.prefix}_revenue") \
            if f"{self.prefix}_revenue" in tables else []
        ord_pg = [r[0] for r in self.sql(f"SELECT order_id FROM {self.prefix}_orders")] \
            if f"{self.prefix}_orders" in tables else []
        ord_json = [r["order_id"] for r in self.json_export("orders")]
        for name, ids in (("orders_pg", ord_pg), ("orders_json", ord_json)):
            assert len(ids) == len(set(ids)), f"{name} holds an order twice"
        rev_json = {r["tier"]: (r["revenue"], r["orders"]) for r in self.json_export("revenue")}
        return {"revenue_pg": {t: (r, n) for t, r, n in rev_pg}, "revenue_json": rev_json,
                "orders_pg": sorted(ord_pg), "orders_json": sorted(ord_json),
                "revenue": self.revenue_table() if (self.table_dir("revenue") / "_delta_log").is_dir() else {}}


def expected(ids: list[int]) -> dict[str, Any]:
    rev = revenue_of(ids)
    return {"revenue_pg": rev, "revenue_json": rev, "orders_pg": sorted(ids), "orders_json": sorted(ids),
            "revenue": rev}


def consistent(got: dict[str, Any], batches: list[list[int]]) -> None:
    """After a kill: each output equals its value after some prefix of the data batches (old or new,
    never half), and the stream exports hold whole batches."""
    prefixes = [sorted(i for b in batches[:k] for i in b) for k in range(len(batches) + 1)]
    for name, value in got.items():
        allowed = [expected(p)[name] for p in prefixes]
        assert value in allowed, f"{name} is half-written: {value}"


def test_kill_9_at_every_stage_then_rerun_is_exact(spark: Any, tmp_path: Path, postgres_url: str,
                                                   streamt_here: StreamtHere) -> None:
    root, pause = tmp_path / "proj", tmp_path / "pause"
    write_project(root, postgres_url, "crash")
    out = Outputs(spark, root, postgres_url, "crash")
    batches: list[list[int]] = []

    def more(n: int) -> None:
        start = sum(len(b) for b in batches)
        batches.append(list(range(start, start + n)))
        add_orders(root, f"b{len(batches)}", range(start, start + n))

    more(12)
    first = streamt_here("run", "-p", str(root))  # the runs that are not killed: in this process
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert out.snapshot() == expected(batches[0])

    def java_started(proc: subprocess.Popen[str]) -> Callable[[], bool]:
        return lambda: any(comm == "java" for _, comm in group_members(proc.pid))

    def new_offsets(proc: subprocess.Popen[str]) -> Callable[[], bool]:
        offsets = root / ".streamt" / "checkpoints" / "orders" / "offsets"
        before = {p.name for p in offsets.iterdir()}
        return lambda: bool({p.name for p in offsets.iterdir() if not p.name.startswith(".")} - before)

    def table_files(proc: subprocess.Popen[str]) -> Callable[[], bool]:
        data = out.table_dir("revenue")
        before = {str(p) for p in data.rglob("*.parquet")}
        return lambda: bool({str(p) for p in data.rglob("*.parquet")} - before)

    def paused(point: str) -> Callable[[subprocess.Popen[str]], Callable[[], bool]]:
        return lambda proc: (pause / point).exists

    stages: list[tuple[str, Callable[[subprocess.Popen[str]], Callable[[], bool]], str | None]] = [
        ("start", java_started, None),
        ("stream", new_offsets, None),
        ("state merged, table not committed", paused("state-merged"), "state-merged"),
        ("table write", table_files, None),
        ("file export swap", paused("export-swap"), "export-swap"),
        ("jdbc commit", paused("jdbc-commit"), "jdbc-commit"),
    ]
    for stage, ready, point in stages:
        more(5)
        proc = streamt(root, pause=(point, pause) if point else None)
        kill_group_when(proc, ready(proc))
        got = out.snapshot()
        consistent(got, batches)
        if point:
            assert (pause / point).exists(), stage
            (pause / point).unlink()

    more(3)
    final = streamt_here("run", "-p", str(root))
    assert final.returncode == 0, final.stdout[-3000:] + final.stderr[-3000:]
    assert "Traceback" not in final.stdout + final.stderr
    all_ids = sorted(i for b in batches for i in b)
    assert out.snapshot() == expected(all_ids), "after the crashes and a rerun every output is exact"
    assert not [t for t in out.pg_tables() if "streamt_stage" in t], "staging tables are dropped or reused"


def test_two_runs_at_once_are_exact(spark: Any, tmp_path: Path, postgres_url: str) -> None:
    root = tmp_path / "proj"
    write_project(root, postgres_url, "twice")
    add_orders(root, "a", range(20))
    procs = [streamt(root) for _ in range(2)]
    outcomes = [(p.wait(timeout=300), p.communicate()[0]) for p in procs]
    for code, text in outcomes:
        assert "Traceback" not in text, text[-3000:]
        if code != 0:  # the other run holds the stream's checkpoint: a clear refusal, nothing half done
            assert "is already running in another run or process" in text, text[-3000:]
    assert any(code == 0 for code, _ in outcomes), [t[-2000:] for _, t in outcomes]
    assert Outputs(spark, root, postgres_url, "twice").snapshot() == expected(list(range(20)))
