"""The models multi-asset: the selected models run in one Spark session, level by level, and each
yields its materialization as soon as it finishes. A failed model skips its downstream; the run
fails at the end when any model failed.

No `from __future__ import annotations` here: Dagster reads the runtime type hints of ops.
"""

from collections.abc import Iterator
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext

from ..api import LoadedProject
from .progress import ModelEvent, emit
from .resources import SparkResource

FULL_REFRESH_TAG = "streamt/full_refresh"


def result_metadata(result: Any) -> dict[str, Any]:
    """What a model run did, as Dagster metadata (row count, duration, schema, streaming progress)."""
    md: dict[str, Any] = {"duration_s": round(float(result.duration_s or 0.0), 3),
                          "materialized": result.materialized}
    if result.rows_written is not None:
        md["dagster/row_count"] = int(result.rows_written)
        md["rows_written"] = int(result.rows_written)
    for attr in ("input_rows", "batches"):
        value = getattr(result, attr, None)
        if value is not None:
            md[attr] = int(value)
    if result.quarantined_rows:
        md["quarantined_rows"] = int(result.quarantined_rows)
    if result.location:
        md["location"] = dg.MetadataValue.path(str(result.location))
    if result.schema:
        md["dagster/column_schema"] = dg.TableSchema(columns=[dg.TableColumn(n, t) for n, t in result.schema])
    if result.last_watermark:
        md["last_watermark"] = str(result.last_watermark)
    for attr in ("input_rows_per_second", "processed_rows_per_second"):
        value = getattr(result, attr, None)
        if value is not None:
            md[attr] = round(float(value), 1)
    if result.sql:
        md["executed_sql"] = dg.MetadataValue.md(f"```sql\n{result.sql}\n```")
    return md


def build_models_asset(loaded: LoadedProject, specs: dict[str, dg.AssetSpec]) -> dg.AssetsDefinition:
    graph = loaded.graph
    name_of = {spec.key: name for name, spec in specs.items()}

    @dg.multi_asset(name=f"{loaded.project.name}_models", specs=list(specs.values()), can_subset=True)
    def models(context: AssetExecutionContext, spark: SparkResource) -> Iterator[dg.MaterializeResult]:
        from ..spark.runner import run_models

        selected = sorted(name_of[k] for k in context.selected_asset_keys if k in name_of)
        ids = [f"model.{n}" for n in selected]
        order = [i.split(".", 1)[1] for i in graph.topological_order(ids)]
        levels = [[i.split(".", 1)[1] for i in lv] for lv in graph.execution_levels(ids)]
        upstream = {n: {u.split(".", 1)[1] for u in graph.upstream_of(f"model.{n}") if u.startswith("model.")}
                    for n in selected}
        refresh = {m for m in (context.run.tags.get(FULL_REFRESH_TAG) or "").split(",") if m}
        failed: list[str] = []
        with spark.session(loaded.project) as session:
            for result in run_models(session, loaded.project, order, levels, upstream, full_refresh=refresh):
                name = result.model
                if result.status == "success":
                    context.log.info(f"streamt: {name} materialized: {result.rows_written} rows in "
                                     f"{result.duration_s:.1f} s")
                    yield dg.MaterializeResult(asset_key=specs[name].key, metadata=result_metadata(result))
                elif result.status == "skipped":
                    context.log.warning(f"streamt: {name} skipped: {result.error}")
                else:
                    failed.append(name)
                    context.log.error(f"streamt: {name} failed: {result.error}")
                emit(ModelEvent(name, result.status, int(result.rows_written or 0), float(result.duration_s or 0.0),
                                str(result.error or "")))
        if failed:
            raise dg.Failure(description=f"{len(failed)} model(s) failed: {', '.join(failed)}",
                             metadata={"failed_models": ", ".join(failed)})

    return models
