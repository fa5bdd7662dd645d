"""``streamt status --history``, ``streamt restore`` and ``streamt vacuum`` as a user types them (in this
process, on the shared session) on real Delta tables written by a real run, and their errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.delta.delta_history import data_files
from dagster_streamt.spark.delta.delta_table import current_commit

from ..conftest import StreamtHere, write_project
from ..helpers import streamt
from ..spark.helpers import jsonl, run

COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]


def _project(tmp_project: Any) -> Any:
    return tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "data/orders", "columns": COLUMNS}],
        "models": [
            {"name": "orders_clean", "materialized": "table",
             "sql": 'SELECT order_id, amount FROM {{ source("orders_raw") }}'},
            {"name": "orders_view", "materialized": "view", "sql": 'SELECT * FROM {{ ref("orders_clean") }}'},
            {"name": "orders_pq", "materialized": "table", "advanced": {"spark": {"format": "parquet"}},
             "sql": 'SELECT * FROM {{ ref("orders_clean") }}'},
        ],
    }, {"data/orders/part1.json": jsonl([{"order_id": 1, "amount": 1.0}, {"order_id": 2, "amount": 2.0}])})


def _ids(path: Path) -> list[int]:
    from deltalake import DeltaTable

    return sorted(DeltaTable(str(path)).to_pyarrow_table().column("order_id").to_pylist())


@pytest.mark.spark
def test_history_restore_and_vacuum_commands(spark: Any, tmp_project: Any, streamt_here: StreamtHere) -> None:
    project = _project(tmp_project)
    root, table = str(project.root), Warehouse.for_project(project).data_dir("orders_clean")
    assert run(spark, project, ["orders_clean"])["orders_clean"].ok
    (project.root / "data/orders/part2.json").write_text(jsonl([{"order_id": 3, "amount": 3.0}]))
    assert run(spark, project, ["orders_clean"])["orders_clean"].refresh == "append"

    shown = streamt_here("status", "-p", root, "--history", "orders_clean")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"orders_clean: Delta table {table} (newest first; `streamt restore orders_clean --version N` " \
                       "goes back)"
    assert re.fullmatch(r"\s+1  \S+ \S+\s+WRITE \(Append\)\s+1\s+0\s+3  incremental refresh 1 since the last build "
                        r"\(append\) over 2 input file\(s\) of source:orders_raw", lines[2]), lines[2]
    assert re.fullmatch(r"\s+0  \S+ \S+\s+WRITE \(Overwrite\)\s+2\s+0\s+2  full build .*", lines[3]), lines[3]
    assert len(lines) == 4
    doc = json.loads(streamt_here("status", "-p", root, "--history", "orders_clean", "-n", "1", "--format", "json"
                                  ).stdout)
    assert doc["table"] == str(table) and [(v["version"], v["table_rows"]) for v in doc["versions"]] == [(1, 3)]

    restored = streamt_here("restore", "-p", root, "orders_clean", "--version", "0")
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.strip().endswith("orders_clean: restored version 0 as version 2 (2 rows); "
                                            "`streamt status --history orders_clean` shows it")
    assert _ids(table) == [1, 2]
    commit = current_commit(table)  # what the next run trusts: the log's own version and row count
    assert commit is not None and (commit.version, commit.rows) == (2, 2)

    vacuumed = streamt_here("vacuum", "-p", root, "--retention-hours", "0", "--format", "json")
    assert vacuumed.returncode == 0, vacuumed.stderr
    assert "below Delta's safety floor of 168 h" in vacuumed.stderr
    added_by_v1 = set(data_files(table, 1)) - set(data_files(table, 0))
    assert json.loads(vacuumed.stdout)["models"][0]["files"] == len(added_by_v1) > 0
    assert {str(p.relative_to(table)) for p in table.glob("*.parquet")} == set(data_files(table, 2))


@pytest.mark.spark
def test_errors_name_the_model_and_the_fix_before_spark_starts(spark: Any, tmp_project: Any,
                                                               streamt_here: StreamtHere) -> None:
    project = _project(tmp_project)
    root = str(project.root)
    never = streamt_here("status", "-p", root, "--history", "orders_clean")
    assert never.returncode == 1 and "model orders_clean has no Delta table at" in never.stderr
    assert "`streamt run -s orders_clean` writes it" in never.stderr
    assert run(spark, project, ["orders_clean"])["orders_clean"].ok

    typo = streamt_here("status", "-p", root, "--history", "ordrs_clean")
    assert typo.returncode == 2 and 'unknown model \'ordrs_clean\'; did you mean "orders_clean"?' in typo.stderr
    view = streamt_here("restore", "-p", root, "orders_view", "--version", "0")
    assert view.returncode == 1 and "model orders_view is a view: it stores no table" in view.stderr
    pq = streamt_here("status", "-p", root, "--history", "orders_pq")
    assert pq.returncode == 1 and "model orders_pq is stored as parquet (advanced.spark.format)" in pq.stderr
    far = streamt_here("restore", "-p", root, "orders_clean", "--version", "7")
    assert far.returncode == 1 and "holds only its current version 0: there is no earlier version" in far.stderr
    early = streamt_here("restore", "-p", root, "orders_clean", "--timestamp", "2001-01-01T00:00:00Z")
    assert early.returncode == 1 and "is before the oldest version the log still holds (version 0" in early.stderr
    both = streamt_here("restore", "-p", root, "orders_clean")
    assert both.returncode == 2 and "give exactly one of --version N or --timestamp TIME" in both.stderr
    bad = streamt_here("restore", "-p", root, "orders_clean", "--timestamp", "yesterday")
    assert bad.returncode == 2 and "'yesterday' is not a time" in bad.stderr
    for out in (typo, view, pq, far, early, both, bad):
        assert "Traceback" not in out.stderr + out.stdout


def test_a_misspelt_delta_key_gets_did_you_mean(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"runtime": {"spark": {"delta": {"vacuum_retension_hours": 3}}}})
    out = streamt("validate", "-p", str(root))
    assert out.returncode == 1
    assert "unknown key 'spark.delta.vacuum_retension_hours'" in out.stdout
    assert 'did you mean "vacuum_retention_hours"?' in out.stdout
