"""Sources in every format Spark ships, read for real: csv, parquet, orc, text, a catalog table, and a
rate stream; each feeds a model whose table is read back."""

from __future__ import annotations

from typing import Any

import pytest

from dagster_streamt.spark import Warehouse

from .helpers import rows, run

pytestmark = pytest.mark.spark
COLS = [{"name": "id", "type": "bigint"}, {"name": "name", "type": "string"}]


def _write(spark: Any, path: str, fmt: str) -> None:
    spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id bigint, name string") \
        .coalesce(1).write.mode("overwrite").format(fmt).save(path)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_columnar_file_sources(spark: Any, tmp_project: Any, fmt: str) -> None:
    project = tmp_project({"sources": [{"name": "src", "format": fmt, "path": "in", "columns": COLS}],
                           "models": [{"name": "m", "sql": 'SELECT id * 10 AS x, name FROM {{ source("src") }}'}]},
                          name=f"p_{fmt}")
    _write(spark, str(project.root / "in"), fmt)
    result = run(spark, project)["m"]
    assert result.ok, result.error
    assert result.input_rows == 3 and result.rows_written == 3
    out = rows(spark, Warehouse.for_project(project).table_location("m"))
    assert sorted((r["x"], r["name"]) for r in out) == [(10, "a"), (20, "b"), (30, "c")]


def test_csv_and_text_sources(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [
            {"name": "people", "format": "csv", "path": "people.csv", "options": {"header": "true"}, "columns": COLS},
            {"name": "lines", "format": "text", "path": "notes", "columns": [{"name": "value", "type": "string"}]},
        ],
        "models": [{"name": "joined", "sql": 'SELECT p.id, p.name, l.value FROM {{ source("people") }} p '
                                             'JOIN {{ source("lines") }} l ON l.value = p.name'}],
    }, {"people.csv": "id,name\n1,a\n2,b\n3,c\n", "notes/n.txt": "b\nc\nz\n"})
    result = run(spark, project)["joined"]
    assert result.ok, result.error
    out = rows(spark, Warehouse.for_project(project).table_location("joined"))
    assert sorted((r["id"], r["value"]) for r in out) == [(2, "b"), (3, "c")]


def test_catalog_table_source(spark: Any, tmp_project: Any) -> None:
    spark.createDataFrame([(7, "x")], "id bigint, name string").createOrReplaceGlobalTempView("ext_people")
    project = tmp_project({"sources": [{"name": "people", "format": "table", "table": "global_temp.ext_people"}],
                           "models": [{"name": "copy", "sql": 'SELECT id, name FROM {{ source("people") }}'}]})
    result = run(spark, project)["copy"]
    assert result.ok, result.error
    assert rows(spark, Warehouse.for_project(project).table_location("copy")) == [{"id": 7, "name": "x"}]


def test_rate_source_stream(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": "5"},
                     "columns": [{"name": "timestamp", "type": "timestamp"}, {"name": "value", "type": "bigint"}]}],
        "models": [{"name": "evens", "materialized": "stream",
                    "sql": 'SELECT value FROM {{ source("ticks") }} WHERE value % 2 = 0'}],
    })
    result = run(spark, project)["evens"]
    assert result.ok, result.error
    out = rows(spark, Warehouse.for_project(project).table_location("evens"))
    assert all(r["value"] % 2 == 0 for r in out)
