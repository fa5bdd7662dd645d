"""``materialized: table`` with ``partitioned_by``: a run replaces exactly its partitions.

One query computes every partition of the run (a 30-day backfill reads its inputs once and writes
once); rows are routed to ``streamt_partition=<key>/`` folders and the run's partitions replaced in one
Delta commit (``replaceWhere`` on its keys, emptied partitions included). Re-running a partition never
duplicates rows and never leaves stale ones.
"""

from __future__ import annotations

import json
import time

from pyspark.sql import Observation
from pyspark.sql import functions as F

from ...core.results import ModelResult
from ...spec.models import Model
from ..delta.delta_table import DELTA, Commit, current_commit, is_delta_table
from ..delta.keyed_table import key_faults, one_row_per_key, table_key
from ..errors import ModelRunError
from ..run.context import RunContext
from ..run.output import schema_pairs
from ..run.partitions import KEY_COLUMN, PartitionScope, describe, key_expr, signature
from ..sources.relations import register, render
from ..storage.store import remove_tree

PARTITIONING = "partitioning"  # the key of the partitioning signature in each commit's userMetadata


def _scope(ctx: RunContext, model: Model) -> PartitionScope:
    pb = model.partitioned_by
    assert pb is not None
    scope = ctx.partition
    if scope is None or not scope.keys:
        raise ModelRunError(f"model {model.name} has {describe(pb)}, so it runs for chosen partitions: "
                            f"`streamt backfill {model.name} --from ... --to ...` or a backfill in the Dagster UI",
                            model.name)
    if scope.signature != signature(pb):
        raise ModelRunError(f"model {model.name}: this run is for other partitions than the model's "
                            f"({describe(pb)}); run it on its own", model.name)
    return scope


def materialize_partitions(ctx: RunContext, model: Model, full_refresh: bool = False) -> ModelResult:
    start = time.monotonic()
    name = model.name
    pb = model.partitioned_by
    assert pb is not None and pb.column
    scope = _scope(ctx, model)
    rendered = render(ctx, model, "batch")
    stats = register(ctx, rendered)
    df = ctx.spark.sql(rendered.sql)
    if pb.column not in df.columns:
        raise ModelRunError(f"model {name}: partitioned_by column {pb.column!r} is not one of its output columns "
                            f"({', '.join(df.columns)}); select it or fix `partitioned_by.column`", name)
    if KEY_COLUMN in df.columns:
        raise ModelRunError(f"model {name}: the output column name {KEY_COLUMN!r} is reserved for partition "
                            "folders; rename it", name)
    keys = list(scope.keys)
    key = table_key(ctx.project, model, df.columns, [(i.kind, i.name) for i in rendered.inputs])
    keyed = (one_row_per_key(df, key) if key else df).withColumn(KEY_COLUMN, key_expr(pb))
    inside = F.col(KEY_COLUMN).isin(keys)
    obs = Observation(f"streamt_partitions_{name}_{ctx.run_id}")
    out = keyed.observe(obs, F.count(F.lit(1)).alias("all"), F.count(F.when(inside, 1)).alias("rows"),
                        F.collect_set(F.when(inside, F.col(KEY_COLUMN))).alias("keys")).filter(inside)
    adv = model.advanced.spark
    sig = signature(pb)
    data = ctx.warehouse.data_dir(name)
    with ctx.warehouse.lock(name):
        stored = _partitioning(current_commit(data), sig)
        if stored not in (None, sig) and not full_refresh:
            raise ModelRunError(f"model {name}: its partitioning changed since its stored partitions were written "
                                f"(now {describe(pb)}); rebuild with a full refresh (`streamt backfill {name} "
                                "--full-refresh ...` drops every stored partition first)", name)
        if full_refresh or (stored is None and is_delta_table(data)):
            remove_tree(data)  # an unpartitioned table (or the old partitioning) is replaced
        if data.is_dir() and not is_delta_table(data):
            remove_tree(data)
        # one commit replaces exactly the run's partitions (emptied ones included)
        with key_faults(key):
            (out.write.format(DELTA).mode("overwrite").option("replaceWhere", _in_keys(keys))
             .option("userMetadata", json.dumps({PARTITIONING: sig}))
             .partitionBy(KEY_COLUMN, *adv.partition_by).save(str(data)))
        metrics = obs.get
        commit = current_commit(data)  # the table is every partition, this run's and the others
        size = commit.rows if commit is not None else None
    seen = metrics.get("rows")
    rows = int(seen) if seen is not None else None  # no count back: unknown, not 0
    in_log = commit.partition_rows if commit is not None else None
    per_key = {k: in_log.get(k, 0) for k in keys} if in_log is not None else None  # an emptied partition: 0
    return ModelResult(model=name, materialized="table", status="success", rows_written=rows, table_rows=size,
                       input_rows=stats.rows, duration_s=time.monotonic() - start, schema=schema_pairs(df.schema),
                       location=str(data), quarantined_rows=stats.resolved().quarantined, sql=rendered.shown,
                       partitions=keys, partition_rows=per_key,
                       delta_version=commit.version if commit is not None else None,
                       rows_outside_partitions=int(metrics.get("all") or 0) - rows if rows is not None else 0)


def _partitioning(current: Commit | None, sig: str) -> str | None:
    """The partitioning the stored partitions were written with, as their last commit records it; None
    when there are none (or the table is not partitioned into them: an unpartitioned model's); ``sig`` (no
    objection) when the last commit is someone else's."""
    if current is None or KEY_COLUMN not in current.partition_columns:
        return None
    try:
        recorded = json.loads(current.user_metadata or "")
    except ValueError:
        return sig
    found = recorded.get(PARTITIONING) if isinstance(recorded, dict) else None
    return found if isinstance(found, str) else sig


def _in_keys(keys: list[str]) -> str:
    """``streamt_partition IN (...)`` over the run's keys, as SQL string literals."""
    quoted = ("'" + k.replace("\\", "\\\\").replace("'", "\\'") + "'" for k in keys)
    return f"{KEY_COLUMN} IN ({', '.join(quoted)})"
