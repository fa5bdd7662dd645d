"""``materialized: table``: run the query in batch and replace the stored table atomically."""

from __future__ import annotations

import shutil
import time

from ..core.results import ModelResult
from ..spec.models import Model
from .context import RunContext
from .output import counted, format_options, observed_rows, schema_pairs
from .relations import register, render
from .warehouse import RegistryEntry


def materialize_table(ctx: RunContext, model: Model, full_refresh: bool = False) -> ModelResult:
    """Write a new version, then swap ``_CURRENT``: readers see the old or the new table, never half.
    A table is rebuilt from scratch on every run, so ``full_refresh`` changes nothing.
    A partitioned table replaces only the run's partitions instead."""
    if model.partitioned_by is not None:
        from .partitioned_table import materialize_partitions

        return materialize_partitions(ctx, model, full_refresh)
    start = time.monotonic()
    rendered = render(ctx, model, "batch", whole=True)
    registered = register(ctx, rendered)
    df = ctx.spark.sql(rendered.sql)
    adv = model.advanced.spark
    options = format_options(adv.format)
    out, obs = counted(df, f"streamt_table_{model.name}_{ctx.run_id}")

    def write(path: str) -> None:
        writer = out.write.format(adv.format).options(**options).mode("error")
        if adv.partition_by:
            writer = writer.partitionBy(*adv.partition_by)
        writer.save(path)

    previous = ctx.warehouse.read_entry(model.name)
    location = ctx.warehouse.write_version(model.name, write)
    if previous is not None and previous.layout == "partitioned":  # no longer partitioned: old folders go
        shutil.rmtree(ctx.warehouse.data_dir(model.name), ignore_errors=True)
    rows = observed_rows(obs)
    ctx.warehouse.write_entry(RegistryEntry(name=model.name, kind="table", layout="versioned", format=adv.format,
                                            schema_json=df.schema.json(), options=options, rows=rows,
                                            version=location.name))
    stats = registered.settle()
    return ModelResult(model=model.name, materialized="table", status="success", rows_written=rows,
                       input_rows=stats.rows, duration_s=time.monotonic() - start, schema=schema_pairs(df.schema),
                       location=str(location), quarantined_rows=stats.quarantined, sql=rendered.sql)
