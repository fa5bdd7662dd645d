"""``materialized: view``: a temporary view, no storage. A later run (or another process) that reads it
renders it again from the project (:mod:`..sources.relations`): what it means is its SQL now."""

from __future__ import annotations

import time

from ...core.results import ModelResult
from ...spec.models import Model
from ..run.context import RunContext
from ..run.output import schema_pairs
from ..sources.relations import quote, register, render


def materialize_view(ctx: RunContext, model: Model, full_refresh: bool = False) -> ModelResult:
    start = time.monotonic()
    rendered = render(ctx, model, "batch")
    stats = register(ctx, rendered)
    ctx.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {quote(model.name)} AS {rendered.sql}")
    schema = ctx.spark.table(quote(model.name)).schema  # analyzes the SQL: errors surface now
    return ModelResult(model=model.name, materialized="view", status="success", rows_written=None,
                       input_rows=stats.rows, duration_s=time.monotonic() - start, schema=schema_pairs(schema),
                       location=None, quarantined_rows=stats.resolved().quarantined, sql=rendered.shown)
