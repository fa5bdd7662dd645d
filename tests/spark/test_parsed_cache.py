"""Small JSON/CSV sources are parsed once per file: later reads take the kept Parquet rows, new files
are parsed into a batch of their own, a changed file drops its batch, and what is read never
differs from a fresh parse (rows, quarantine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.parsed_cache import MANIFEST

from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "v", "type": "double"}]
MODELS = [{"name": "total", "sql": 'SELECT count(*) AS n, sum(v) AS s FROM {{ source("raw") }}'},
          {"name": "copy", "sql": 'SELECT id, v FROM {{ source("raw") }}'}]


def project_with(tmp_project: Any, files: dict[str, str], name: str = "proj", **spark: Any) -> Any:
    return tmp_project({"sources": [{"name": "raw", "format": "json", "path": "in", "columns": COLUMNS}],
                        "models": MODELS, **({"runtime": {"spark": spark}} if spark else {})}, files, name=name)


def batches(project: Any) -> list[dict[str, Any]]:
    import json

    root = Warehouse.for_project(project).root / "_parsed" / "raw"
    return [json.loads(p.read_text()) for p in sorted(root.glob(f"*/{MANIFEST}"))]


def totals(spark: Any, project: Any) -> list[dict[str, Any]]:
    return rows(spark, Warehouse.for_project(project).table_location("total"))


def test_each_file_is_parsed_once_and_read_from_parquet_after(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, {"in/a.json": jsonl({"id": i, "v": 1.0} for i in range(3)) + "{bad\n"})
    first = run(spark, project)
    assert first["total"].quarantined_rows == 1 and first["copy"].quarantined_rows == 1
    assert [sorted(b["files"]) for b in batches(project)] == [[str(project.root / "in" / "a.json")]]
    assert batches(project)[0]["rows"] == 3

    (project.root / "in" / "b.json").write_text(jsonl([{"id": 10, "v": 2.5}]))
    second = run(spark, project)
    assert second["copy"].refresh == "append" and second["copy"].input_rows == 1
    assert len(batches(project)) == 2  # the new file alone: a batch of its own
    assert totals(spark, project) == [{"n": 4, "s": 5.5}]
    quarantine = rows(spark, Warehouse.for_project(project).quarantine_dir("raw"))
    assert [r["raw_record"] for r in quarantine] == ["{bad"]  # once, though two models read the file


def test_a_changed_file_is_parsed_again(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, {"in/a.json": jsonl([{"id": 1, "v": 1.0}]),
                                         "in/b.json": jsonl([{"id": 2, "v": 2.0}])})
    run(spark, project)
    (project.root / "in" / "a.json").write_text(jsonl([{"id": 1, "v": 10.0}, {"id": 3, "v": 3.0}]))
    result = run(spark, project)
    assert result["total"].refresh == "full"
    assert totals(spark, project) == [{"n": 3, "s": 15.0}]
    assert sorted(sorted(Path(f).name for f in b["files"]) for b in batches(project)) == [["a.json", "b.json"]]


def test_without_the_cache_the_same_rows(spark: Any, tmp_project: Any) -> None:
    files = {"in/a.json": jsonl({"id": i, "v": i / 3} for i in range(50)) + '{"id": "x", "v": 1}\n'}
    cached = project_with(tmp_project, files)
    run(spark, cached)
    plain = project_with(tmp_project, files, name="plain", parsed_cache_mb=0)
    run(spark, plain)
    assert not batches(plain)
    for name in ("total", "copy"):
        got, want = (sorted(map(repr, rows(spark, Warehouse.for_project(p).table_location(name))))
                     for p in (cached, plain))
        assert got == want, name
    assert run(spark, cached)["total"].quarantined_rows == 1 == run(spark, plain)["total"].quarantined_rows


def test_a_damaged_batch_is_dropped_and_parsed_again(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, {"in/a.json": jsonl([{"id": 1, "v": 1.0}])})
    run(spark, project)
    root = Warehouse.for_project(project).root / "_parsed" / "raw"
    (next(root.glob(f"*/{MANIFEST}"))).write_text("{not json")
    result = run(spark, project, full_refresh=["total"])["total"]
    assert result.ok and totals(spark, project) == [{"n": 1, "s": 1.0}]
    assert len(batches(project)) == 1
