"""`kill -9` of a whole `streamt run` while the source's quarantine query writes its Delta table, then a
rerun: every malformed record is in the quarantine exactly once (the checkpoint knows the files read,
Delta's sink skips a batch it had committed), whichever side of the commit the kill landed on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from deltalake import DeltaTable

from ..conftest import StreamtHere
from .kill import kill_group_when

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]


def write_project(root: Path) -> None:
    config = {
        "project": {"name": "qcrash"},
        "runtime": {"spark": {"master": "local[2]", "conf": {"spark.sql.shuffle.partitions": "2"}}},
        "sources": [{"name": "orders_raw", "format": "json", "path": "in", "columns": COLUMNS}],
        "models": [{"name": "orders", "materialized": "table",
                    "sql": 'SELECT order_id, amount FROM {{ source("orders_raw") }}'}],
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def add_file(root: Path, name: str, ids: range) -> list[str]:
    """A file whose odd ids are malformed lines; returns those lines."""
    (root / "in").mkdir(exist_ok=True)
    lines = [json.dumps({"order_id": i, "amount": i * 1.5}) if i % 2 == 0 else f'{{"order_id": {i}, oops' for i in ids]
    tmp = root / "in" / f".{name}.tmp"
    tmp.write_text("".join(line + "\n" for line in lines))
    tmp.rename(root / "in" / f"{name}.json")  # a source file appears whole
    return [line for line in lines if "oops" in line]


def streamt(root: Path) -> subprocess.Popen[str]:
    """`streamt run` in its own process group, as a shell starts it, with this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root)], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def quarantine(root: Path) -> Path:
    return root / ".streamt" / "warehouse" / "orders_raw__quarantine" / "data"


def quarantined(root: Path) -> list[str]:
    if not (quarantine(root) / "_delta_log").is_dir():
        return []
    return sorted(r["raw_record"] for r in DeltaTable(str(quarantine(root))).to_pyarrow_table().to_pylist())


def test_kill_9_during_the_quarantine_write_then_rerun_is_exact(tmp_path: Path, streamt_here: StreamtHere) -> None:
    root = tmp_path / "proj"
    write_project(root)
    bad = add_file(root, "a", range(0, 40))
    first = streamt_here("run", "-p", str(root))  # the runs nobody kills: in this process
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert quarantined(root) == sorted(bad)

    def new_data_file() -> Callable[[], bool]:  # the batch's rows are written; its commit is moments away
        before = set(quarantine(root).glob("*.parquet"))
        return lambda: bool(set(quarantine(root).glob("*.parquet")) - before)

    def new_commit() -> Callable[[], bool]:  # Delta committed; the checkpoint's commit may not be yet
        before = set((quarantine(root) / "_delta_log").glob("*.json"))
        return lambda: bool(set((quarantine(root) / "_delta_log").glob("*.json")) - before)

    for n, point in enumerate((new_data_file, new_commit)):
        bad += add_file(root, f"b{n}", range(100 * (n + 1), 100 * (n + 1) + 40))
        proc = streamt(root)
        kill_group_when(proc, point(), timeout=300)
        got = quarantined(root)
        assert len(got) == len(set(got)) and set(got) <= set(bad), "nothing twice, nothing invented"

    final = streamt_here("run", "-p", str(root))
    assert final.returncode == 0, final.stdout[-3000:] + final.stderr[-3000:]
    assert "Traceback" not in final.stdout + final.stderr
    assert quarantined(root) == sorted(bad), "after the kills and a rerun: each malformed line exactly once"
    again = streamt_here("run", "-p", str(root))  # nothing new: nothing added
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert quarantined(root) == sorted(bad)
