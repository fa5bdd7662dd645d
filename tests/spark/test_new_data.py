"""A local run's JVM compilers follow the new data it reads (spark/new_data.py, spark/session/jit.py): C1 alone for a
run with little new data, the JVM's default for a large one, the project's choice when it makes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagster_streamt import load
from dagster_streamt.spark.new_data import QUICK_BYTES, choose_jit, new_input_bytes

from ..conftest import write_project
from .helpers import jsonl, run

COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "k", "type": "string"}]
MODELS = [
    {"name": "clean", "sql": 'SELECT id, k FROM {{ source("raw") }} WHERE id > 0'},
    {"name": "picked", "materialized": "view", "sql": 'SELECT * FROM {{ source("dim") }}'},
    {"name": "joined", "materialized": "table",
     "sql": 'SELECT c.id, p.k FROM {{ ref("clean") }} c JOIN {{ ref("picked") }} p ON c.k = p.k'},
    {"name": "counts", "materialized": "table", "sql": 'SELECT k, count(*) AS n FROM {{ ref("clean") }} GROUP BY k'},
    {"name": "kept", "materialized": "table", "sql": 'SELECT id FROM {{ source("raw") }} WHERE id > 10'},
]


def project_dir(tmp_path: Path, runtime: dict[str, Any] | None = None) -> Path:
    config: dict[str, Any] = {
        "sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLUMNS},
                    {"name": "dim", "format": "json", "path": "dim", "columns": COLUMNS}],
        "models": MODELS}
    if runtime:
        config["runtime"] = runtime
    files = {"in/a.json": jsonl({"id": i, "k": f"k{i % 3}"} for i in range(1, 50)),
             "dim/d.json": jsonl({"id": i, "k": f"k{i}"} for i in range(3))}
    return write_project(tmp_path / "proj", config, files)


def size(root: Path, *rels: str) -> int:
    return sum((root / rel).stat().st_size for rel in rels)


def test_a_first_run_counts_every_file_each_model_reads(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    loaded = load(root)
    names = ["clean", "joined", "counts", "kept"]
    # no table yet: each model reads its sources in full (joined: the dimension through the view), and its
    # upstream tables as they are (none yet: what clean reads is counted once, at clean)
    want = size(root, "in/a.json") + size(root, "dim/d.json") + size(root, "in/a.json")  # clean, joined, kept
    assert new_input_bytes(loaded.project, loaded.compiled, names) == want
    assert choose_jit(loaded.project, loaded.compiled, names) == "quick"
    big = root / "in" / "big.json"
    with big.open("wb") as f:  # a sparse file: its size is what counts, nothing is read
        f.truncate(QUICK_BYTES)
    assert new_input_bytes(loaded.project, loaded.compiled, ["clean"]) == size(root, "in/a.json") + QUICK_BYTES
    assert choose_jit(loaded.project, loaded.compiled, ["clean"]) == "full"
    assert choose_jit(loaded.project, loaded.compiled, []) == "quick"  # nothing to read


def test_the_project_decides_when_it_says(tmp_path: Path) -> None:
    loaded = load(project_dir(tmp_path, {"spark": {"jit": "full"}}))
    assert choose_jit(loaded.project, loaded.compiled, ["clean"]) == "full"
    quick = load(project_dir(tmp_path / "q", {"spark": {"jit": "quick"}}))
    with (quick.project.root / "in" / "big.json").open("wb") as f:
        f.truncate(2 * QUICK_BYTES)
    assert choose_jit(quick.project, quick.compiled, ["clean"]) == "quick"


def test_an_input_python_cannot_list_leaves_the_jvm_default(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {
        "sources": [{"name": "raw", "format": "json", "path": "in/*.json", "columns": COLUMNS}],
        "models": [{"name": "clean", "sql": 'SELECT id FROM {{ source("raw") }}'}]},
        {"in/a.json": jsonl([{"id": 1, "k": "a"}])})
    loaded = load(root)
    assert new_input_bytes(loaded.project, loaded.compiled, ["clean"]) is None
    assert choose_jit(loaded.project, loaded.compiled, ["clean"]) == "full"


@pytest.mark.spark
def test_a_rerun_counts_only_the_files_not_read_yet(spark: Any, tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    loaded = load(root)
    names = ["clean", "joined", "counts", "kept"]
    assert all(r.ok for r in run(spark, loaded.project).values())
    dim = size(root, "dim/d.json")  # joined reads the dimension through the view each run: no record lists it
    assert new_input_bytes(loaded.project, loaded.compiled, names) == dim
    (root / "in" / "b.json").write_text(jsonl({"id": i, "k": "k1"} for i in range(100, 120)))
    new = size(root, "in/b.json")
    # the stream clean and the table kept read the new file only (clean's checkpoint and kept's refresh record
    # list the files read); joined and counts read clean's new rows (a table: its rows come from files counted
    # where they are read)
    assert new_input_bytes(loaded.project, loaded.compiled, names) == 2 * new + dim
    # a model refreshed in full reads its upstream table in full: clean's Parquet files, as delta-rs lists them
    from deltalake import DeltaTable

    from dagster_streamt.spark import Warehouse

    actions = DeltaTable(str(Warehouse.for_project(loaded.project).data_dir("clean"))).get_add_actions(flatten=True)
    clean = sum(actions.column("size_bytes").to_pylist())
    assert clean > 0
    assert new_input_bytes(loaded.project, loaded.compiled, names, ["counts"]) == 2 * new + dim + clean
    # a file read before, rewritten: kept rebuilds from every file (a stream reads only paths it has not read)
    (root / "in" / "a.json").write_text(jsonl({"id": i, "k": "k2"} for i in range(1, 70)))
    assert new_input_bytes(loaded.project, loaded.compiled, names) == new + dim + size(root, "in/a.json", "in/b.json")


def test_the_jit_options_examples_run() -> None:
    """with_jit's examples: C1 alone with the tiered code cache, a compiler the user chose left alone."""
    import doctest

    from dagster_streamt.spark.session import jit

    failed, tried = doctest.testmod(jit, raise_on_error=False)
    assert failed == 0 and tried >= 3
