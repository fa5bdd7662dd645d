"""Where continuous-test violations live and how they are written: replay-safe folders and ledgers.

Layout (Parquet; ``run_id`` and ``test`` are Hive-style partitions, the rest is in the files)::

    <warehouse>/<model>__violations/
      data/run_id=<run>/test=<test>/batch-<n>-<stream>/   row and per-batch violations of micro-batch n
      data/run_id=<run>/test=<test>/progress/              run-level violations (throughput)
      _staging/                                           writes in progress, renamed into data/
    <checkpoints>/<model>__violations/<test>/             the side query's checkpoint, plus
      _streamt_stream.json                                its generation id (new after a reset)
      _streamt_batches/<n>.json                           ledger: where batch n's violations are, rows

Idempotent per (batch, test): a batch replayed after a crash (written, not committed) replaces its
folder and deletes the copy an earlier run left (the ledger names it), so replays never duplicate.
Locally a folder is written aside and renamed into ``data/``, so a reader lists it whole or not at all.
With the warehouse on an object store (no rename) the records and the side queries' checkpoints live
there too and a folder is written in place (Spark's overwrite): a reader listing during that write may
see part of one batch's violations; once the write ends, every batch's folder is whole and once.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from ..spark.storage.object_lock import lock_at
from ..spark.storage.paths import ProjectPaths, partition_folder
from ..spark.storage.store import Loc, ObjectPath, remove_tree, write_text
from ..spark.storage.warehouse import Warehouse
from ..spec.project import Project
from .continuous import VIOLATIONS_SCHEMA
from .results import json_safe

TABLE_SCHEMA = f"{VIOLATIONS_SCHEMA}, run_id string"
COLUMNS = ("record", "test", "assertion", "violation", "batch_id", "detected_at", "run_id")
FILE_COLUMNS = ("record", "assertion", "violation", "batch_id", "detected_at")  # test, run_id: the path
FILE_TIME = "__streamt_file_time"
STREAM_FILE = "_streamt_stream.json"
LEDGER = "_streamt_batches"
LAST_ERROR = "_streamt_last_error.json"
LEDGER_KEEP = 100  # only the last uncommitted batch can be replayed; older entries are dropped
PROGRESS = "progress"


def violations_name(model: str) -> str:
    return f"{model}__violations"


def violations_dir(project: Project, model: str) -> Loc:
    """``<warehouse>/<model>__violations``: the table (``data/``) and, locally, its staging area."""
    return Warehouse.for_project(project).root / violations_name(model)


def run_part(run_id: str) -> str:
    return partition_folder("run_id", run_id)


def test_rel(run_id: str, test: str) -> str:
    return f"{run_part(run_id)}/{partition_folder('test', test)}"


# -- small files: written atomically (a rename locally, one PUT on an object store), so a crash leaves the
# old or the new content ------------------------------------------------------------------------------
def write_json(path: Loc, data: dict[str, Any]) -> None:
    write_text(path, json.dumps(data, sort_keys=True))


def read_json(path: Loc) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def stream_id(checkpoint: Loc) -> str:
    """The checkpoint's generation: batch ids restart at 0 after a reset, folder names must not."""
    data = read_json(checkpoint / STREAM_FILE)
    if data and data.get("stream"):
        return str(data["stream"])
    stream = uuid.uuid4().hex[:12]
    write_json(checkpoint / STREAM_FILE, {"stream": stream, "created_at": datetime.now(UTC).isoformat()})
    return stream


def ledger_path(checkpoint: Loc, batch_id: int) -> Loc:
    return checkpoint / LEDGER / f"{batch_id}.json"


# -- folders: swapped with renames, so a replay replaces rather than duplicates ------------------
def discard(path: Loc, staging: Loc) -> None:
    """Remove a folder readers may be listing: move it out of ``data/`` first, then delete it (on an object
    store: delete it)."""
    if isinstance(path, ObjectPath) or isinstance(staging, ObjectPath):
        remove_tree(path)
        return
    if not path.exists():
        return
    staging.mkdir(parents=True, exist_ok=True)
    trash = staging / f"old-{uuid.uuid4().hex}"
    os.rename(path, trash)
    shutil.rmtree(trash, ignore_errors=True)


def store(frame: DataFrame, final: Loc, staging: Loc) -> int:
    """Write ``frame`` to ``final`` with overwrite semantics, in one job; no rows: ``final`` is removed."""
    seen = Observation(f"streamt_violations_{uuid.uuid4().hex[:12]}")
    rows_of = frame.select(*FILE_COLUMNS).observe(seen, F.count(F.lit(1)).alias("rows"))
    if isinstance(final, ObjectPath) or isinstance(staging, ObjectPath):  # no rename: written in place
        rows_of.write.mode("overwrite").parquet(str(final))
        rows = int(seen.get.get("rows") or 0)
        if not rows:
            remove_tree(final)
        return rows
    tmp = staging / f"new-{uuid.uuid4().hex}"
    try:
        rows_of.write.parquet(str(tmp))
        rows = int(seen.get.get("rows") or 0)
        discard(final, staging)
        if rows:
            final.parent.mkdir(parents=True, exist_ok=True)
            os.rename(tmp, final)
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def summary_row(test: str, label: str, violation: str, batch_id: int | None, now: datetime,
             record: dict[str, Any]) -> tuple[Any, ...]:
    """A violation row whose record is a JSON summary (aggregate and progress assertions)."""
    return json.dumps(json_safe(record), sort_keys=True), test, label, violation, batch_id, now


def literal_frame(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    """Violation rows as SQL literals: unlike ``createDataFrame(list)`` no Python worker starts."""
    types = [f.split(" ") for f in VIOLATIONS_SCHEMA.split(", ")]
    structs = [F.struct(*(F.lit(v).cast(t).alias(n) for v, (n, t) in zip(row, types, strict=True))) for row in rows]
    empty = F.array_repeat(F.struct(*(F.lit(None).cast(t).alias(n) for n, t in types)), 0)
    return spark.range(1).select(F.inline(F.array(*structs) if structs else empty))


def parse_record(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return {"record": text}
    return value if isinstance(value, dict) else {"record": value}


def read_violations(spark: SparkSession, project: Project, model: str, run_id: str | None = None) -> DataFrame:
    """Recorded violations of ``model``'s continuous tests (all runs, or one), for the UI and CLI."""
    data = violations_dir(project, model) / "data"
    path = data if run_id is None else data / run_part(run_id)
    if not path.is_dir():
        return literal_frame(spark, []).withColumn("run_id", F.lit(None).cast("string")).select(*COLUMNS)
    return spark.read.schema(TABLE_SCHEMA).option("basePath", str(data)).parquet(str(path)).select(*COLUMNS)


def reset_violations(project: Project, model: str, *, history: bool = False) -> None:
    """Forget which rows the continuous tests of ``model`` checked (call it on a full refresh, so the
    reprocessed output is checked again); recorded violations stay unless ``history`` is set."""
    paths = ProjectPaths.from_project(project)
    name = violations_name(model)
    busy = f"cannot reset the continuous tests of model {model} while they run"
    with lock_at(paths.checkpoint_lock(name), busy_message=busy, model=model):
        remove_tree(paths.checkpoint(name))
        if history:
            remove_tree(violations_dir(project, model))
