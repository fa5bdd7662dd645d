"""Bad data, config and machine setups fail with one clear message that names the model and the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import (
    ProjectMovedError,
    ProjectPaths,
    SparkSetupError,
    Warehouse,
    check_java,
    create_session,
)
from dagster_streamt.spark.storage.locks import FileLock

from .helpers import jsonl, rows, run

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "v", "type": "string"}]


def stream_project(tmp_project: Any, sql: str = 'SELECT id FROM {{ source("s") }}', name: str = "proj",
                   **source: Any) -> Any:
    return tmp_project({
        "sources": [{"name": "s", "format": "json", "path": "in", "columns": COLUMNS, **source},
                    {"name": "s2", "format": "json", "path": "in2", "columns": COLUMNS}],
        "models": [{"name": "m", "materialized": "stream", "sql": sql}],
    }, {"in/a.json": jsonl([{"id": 1, "v": "a"}]), "in2/a.json": jsonl([{"id": 2, "v": "b"}])}, name=name)


def test_changed_output_schema_needs_full_refresh(spark: Any, tmp_project: Any) -> None:
    project = stream_project(tmp_project)
    assert run(spark, project)["m"].ok
    changed = stream_project(tmp_project, 'SELECT id, v FROM {{ source("s") }}')
    result = run(spark, changed)["m"]
    assert result.status == "failed"
    assert "output columns added: v" in result.error
    assert "streamt run --full-refresh m" in result.error

    refreshed = run(spark, changed, full_refresh=["m"])["m"]
    assert refreshed.ok and refreshed.rows_written == 1
    assert rows(spark, Warehouse.for_project(changed).table_location("m")) == [{"id": 1, "v": "a"}]


def test_spark_checkpoint_refusal_is_explained(spark: Any, tmp_project: Any) -> None:
    project = stream_project(tmp_project)
    assert run(spark, project)["m"].ok
    (ProjectPaths.from_project(project).checkpoint("m") / "_streamt_query.json").unlink()  # only Spark checks
    union = stream_project(tmp_project, 'SELECT id FROM {{ source("s") }} UNION ALL SELECT id FROM {{ source("s2") }}')
    result = run(spark, union)["m"]
    assert result.status == "failed"
    assert "sources in the checkpoint offsets" in result.error
    assert "streamt run --full-refresh m" in result.error


def test_second_writer_on_a_checkpoint_is_refused(spark: Any, tmp_project: Any) -> None:
    project = stream_project(tmp_project)
    with FileLock(ProjectPaths.from_project(project).checkpoint_lock("m")):  # another run holds it
        result = run(spark, project)["m"]
    assert result.status == "failed"
    assert "stream model m is already running" in result.error and "pid" in result.error
    assert run(spark, project)["m"].ok  # free again afterwards


def test_moved_project_stops_until_full_refresh(spark: Any, tmp_project: Any, tmp_path: Path) -> None:
    project = stream_project(tmp_project)
    assert run(spark, project)["m"].ok
    shutil.copytree(project.root, tmp_path / "copy")
    copy = stream_project(tmp_project, name="copy")  # same files, loaded from the new folder
    with pytest.raises(ProjectMovedError, match=r"moved or copied .*`streamt run --full-refresh"):
        run(spark, copy)
    result = run(spark, copy, full_refresh=["m"])["m"]
    assert result.ok and result.rows_written == 1
    assert run(spark, copy)["m"].ok  # the new root is recorded


def test_stream_source_without_columns(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "s", "format": "json", "path": "in"}],
        "models": [{"name": "m", "materialized": "stream", "sql": 'SELECT * FROM {{ source("s") }}'}],
    }, {"in/a.json": jsonl([{"id": 1}])})
    result = run(spark, project)["m"]
    assert result.ok and result.rows_written == 1  # the schema is inferred once from the data ...
    recorded = json.loads((project.root / "target" / "schemas" / "s.json").read_text())
    assert [f["name"] for f in recorded["schema"]["fields"]] == ["id"]  # ... and recorded, so restarts keep it


def test_empty_stream_source_without_columns(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "s", "format": "json", "path": "in"}],
        "models": [{"name": "m", "materialized": "stream", "sql": 'SELECT * FROM {{ source("s") }}'}],
    }, {"in/.keep": ""})
    result = run(spark, project)["m"]
    assert result.status == "failed"
    assert "holds no data yet" in result.error and "`columns:`" in result.error


# The suite's shared session carries Kafka's and Avro's connectors; a cluster image without them (jar policy
# `provided`, Delta on the classpath) is what this test needs, so its session is one of those, in a child.
WITHOUT_CONNECTORS = """
import json, sys
from pathlib import Path
from dagster_streamt.jars import sets
from dagster_streamt.jars.fetch import cached
from dagster_streamt.spark import SparkSettings, create_session
from tests.conftest import load
from tests.spark.helpers import run
project = load(Path(sys.argv[1]))
delta = ",".join(str(jar) for jar in cached(sets.delta()) or [])
spark = create_session(project, SparkSettings.from_project(project, conf={"spark.jars": delta}))
print(json.dumps({name: result.error for name, result in run(spark, project).items()}))
"""


def test_missing_connector_or_schema_is_explained(tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "k", "topic": "orders", "columns": COLUMNS},
                    {"name": "a", "format": "avro", "path": "in"},
                    {"name": "e", "format": "json", "path": "empty"}],
        "models": [{"name": "m", "materialized": "stream", "sql": 'SELECT * FROM {{ source("k") }}'},
                   {"name": "t", "materialized": "table", "sql": 'SELECT * FROM {{ source("a") }}'},
                   {"name": "u", "materialized": "table", "sql": 'SELECT * FROM {{ source("e") }}'}],
    }, {"in/x.avro": "", "empty/.keep": ""})
    child = subprocess.run([sys.executable, "-c", WITHOUT_CONNECTORS, str(project.root)], cwd=REPO, text=True,
                           capture_output=True, timeout=300, env={**os.environ, "STREAMT_JARS": "provided"})
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
    errors = json.loads(child.stdout.strip().splitlines()[-1])
    assert "spark.jars.packages" in errors["m"] and "spark-sql-kafka-0-10_2.13" in errors["m"]
    assert errors["t"].startswith("model t: source a: Spark has no data source for format 'avro'")
    assert "org.apache.spark:spark-avro_2.13" in errors["t"]
    assert errors["u"].startswith("model u: source e: Spark cannot infer a schema from empty")


def test_missing_or_old_java_is_reported_before_the_jvm(tmp_project: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nojava"))
    with pytest.raises(SparkSetupError, match=r"has no bin/java.*openjdk-17-jre-headless"):
        check_java()
    old = tmp_path / "jdk11" / "bin"
    old.mkdir(parents=True)
    (old / "java").write_text('#!/bin/sh\necho \'openjdk version "11.0.21" 2023-10-17\' >&2\n')
    (old / "java").chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(old.parent))
    with pytest.raises(SparkSetupError, match=r"is Java 11.*apt-get install openjdk-17-jre-headless"):
        create_session(stream_project(tmp_project))


def test_a_wrapping_write_error_is_explained_by_its_cause() -> None:
    """Delta's writer wraps a row's failure in TASK_WRITE_FAILED: the message names the row's error."""
    from dagster_streamt.spark.errors import first_meaningful_line

    class Captured(Exception):
        def __init__(self, text: str, cause: Exception | None = None) -> None:
            super().__init__(text)
            self.cause = cause

    cast = Captured("[CAST_INVALID_INPUT] The value 'x' of the type STRING cannot be cast to INT. SQLSTATE: 22018")
    wrapped = Captured("Query q terminated with exception: [TASK_WRITE_FAILED] Task failed while writing rows to "
                       "file:/w/coded/data.", Captured("[TASK_WRITE_FAILED] Task failed", cast))
    line = first_meaningful_line(wrapped)
    assert line.startswith("[CAST_INVALID_INPUT] The value 'x'") and line.endswith("(TASK_WRITE_FAILED)")
    printed = Exception("[TASK_WRITE_FAILED] Task failed while writing rows.\n\tat a.b(C.java:1)\n"
                        "Caused by: org.apache.spark.SparkNumberFormatException: [CAST_INVALID_INPUT] The value 'x'")
    assert first_meaningful_line(printed).startswith("[CAST_INVALID_INPUT] The value 'x'")
    assert first_meaningful_line(Exception("[OTHER] plain")) == "[OTHER] plain"
