"""Exports to a Delta table (``sink: {format: delta, path: ...}``), with Delta's own mechanisms.

The rows are staged first, so the sink's key checks (no NULL key, one row per key) run before
anything is published; then one Delta commit publishes them: an overwrite (``mode: replace``), an
append, or a ``MERGE`` on the key (``mode: upsert``: rows of new keys inserted, rows of known keys
replaced). A micro-batch's append carries Delta's idempotent-write marker (``txnAppId`` = the query,
``txnVersion`` = the batch id), so a batch Spark replays after a crash is skipped by Delta itself;
a replayed ``MERGE`` writes the same rows again, which changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from ...sql.identifiers import delta_path
from ...sql.identifiers import quote as _ident
from ..delta.delta_table import DELTA, is_delta_table
from ..delta.keyed_table import insert_all, update_all
from ..delta.table_state import stage
from ..run.observed_views import ObservedViews, sql_over
from ..storage.store import Loc, remove_tree


def _exists(spark: SparkSession, path: str) -> bool:
    """Whether a Delta table is at ``path`` (a local folder, or an object-store URI Spark can read)."""
    if "://" not in path or path.startswith("file:"):
        return is_delta_table(Path(path.removeprefix("file:")))
    try:  # (not DeltaTable.isDeltaTable: on Spark Connect it needs Delta's Connect plugin on the server)
        spark.read.format(DELTA).load(path).schema  # noqa: B018 - reading the schema reads the log
    except PySparkException:  # no table there (yet): Delta's or Spark's analysis error
        return False
    return True


def merge_by_key(df: DataFrame, path: str, key: tuple[str, ...]) -> None:
    """``MERGE`` ``df`` (one row per key) into the Delta table at ``path``: NULL-safe key equality."""
    source = f"streamt_upsert_{uuid.uuid4().hex[:12]}"
    on = " AND ".join(f"t.{_ident(k)} <=> s.{_ident(k)}" for k in key)
    sql_over(df.sparkSession, f"MERGE INTO {delta_path(path)} AS t USING `{source}` AS s ON {on} "
             f"WHEN MATCHED THEN {update_all(df.columns)} WHEN NOT MATCHED THEN {insert_all(df.columns)}",
             {source: df}).collect()


def publish(df: DataFrame, path: str, mode: str, key: tuple[str, ...], verify: Callable[[], None], scratch: Loc,
            txn: tuple[str, int] | None = None, observed: ObservedViews | None = None) -> None:
    """Publish ``df`` to the Delta table at ``path`` in one commit (see the module docstring); ``verify``
    raises when the staged rows cannot be published; ``txn``: (app id, batch id) of a micro-batch;
    ``observed``: the run's observed views (a one-shot export reads them, a micro-batch does not)."""
    try:
        staged = stage(df, str(scratch), observed)
        verify()
        if mode == "upsert" and _exists(df.sparkSession, path):
            merge_by_key(staged, path, key)
            return
        writer = staged.write.format(DELTA).mode("overwrite" if mode == "replace" else "append")
        if mode == "replace":
            writer = writer.option("overwriteSchema", "true")
        if txn is not None:
            writer = writer.option("txnAppId", txn[0]).option("txnVersion", str(txn[1]))
        writer.save(path)
    finally:
        remove_tree(scratch)
