"""What a model run did, as Dagster metadata: the materialization's entries, each partition's own, and
the run log's line. Times are Dagster timestamps (the UI shows dates, not epoch numbers); a partitioned
run's figures over all its partitions are named ``run_*`` so no partition shows another's rows."""

from __future__ import annotations

from typing import Any

import dagster as dg

from ..core import metadata as meta
from ..core.results import ModelResult


def timing(started: float, ended: float) -> dict[str, Any]:
    """When the model started and ended, as timestamps the UI shows as dates."""
    return {meta.STARTED_AT: dg.MetadataValue.timestamp(round(started, 3)),
            meta.ENDED_AT: dg.MetadataValue.timestamp(round(ended, 3))}


def result_metadata(result: ModelResult) -> dict[str, Any]:
    """What a model run did, as Dagster metadata (row count, duration, schema, streaming progress)."""
    md: dict[str, Any] = {"duration_s": round(float(result.duration_s or 0.0), 3),
                          "materialized": result.materialized}
    if result.table_rows is not None:  # the table's size, whatever this run added (never a guess)
        md["dagster/row_count"] = int(result.table_rows)
    if result.rows_written is not None:
        md["rows_written"] = int(result.rows_written)
    elif result.materialized != "view":  # stored, but no count came back: say so rather than 0
        md["rows_written"] = "unknown"
    for attr, count in (("input_rows", result.input_rows), ("batches", result.batches)):
        if count is not None:
            md[attr] = int(count)
    if result.quarantined_rows:
        md["quarantined_rows"] = int(result.quarantined_rows)
    if result.refresh:
        md["refresh"] = result.refresh  # full | unchanged | append | merge | upsert
        md["refresh_note"] = result.refresh_note or ""
    if result.location:
        md["location"] = dg.MetadataValue.path(str(result.location))
    if result.delta_version is not None:  # any engine that reads Delta reads it there
        md["table_format"] = "delta"
        md["delta_version"] = int(result.delta_version)
        md["read"] = result.read_line or ""
    if result.schema:
        md["dagster/column_schema"] = dg.TableSchema(columns=[dg.TableColumn(n, t) for n, t in result.schema])
    if result.last_watermark:
        md["last_watermark"] = str(result.last_watermark)
    for attr, rate in (("input_rows_per_second", result.input_rows_per_second),
                       ("processed_rows_per_second", result.processed_rows_per_second)):
        if rate is not None:
            md[attr] = round(float(rate), 1)
    if result.partitions:  # a partition's own rows are its partition-scoped metadata (partition_metadata)
        md["partitions"] = ", ".join(result.partitions) if len(result.partitions) <= 10 else \
            f"{result.partitions[0]} .. {result.partitions[-1]} ({len(result.partitions)})"
        for attr in ("rows_written", "input_rows"):  # the run's, over all its partitions: named so
            if attr in md:
                md[f"run_{attr}"] = md.pop(attr)
    if result.rows_outside_partitions:
        md["rows_outside_partitions"] = int(result.rows_outside_partitions)
    if result.sql:
        md["executed_sql"] = dg.MetadataValue.md(f"```sql\n{result.sql}\n```")
    return md


def partition_metadata(result: ModelResult, key: str, pdef: dg.PartitionsDefinition | None) -> dict[str, Any]:
    """One partition's own entries: its rows (``dagster/partition_row_count``; the run replaced it whole,
    so also its ``rows_written``) and its time window.

    >>> r = ModelResult("daily", "table", "success", rows_written=8, table_rows=20,
    ...                 partitions=["2026-11-02", "2026-11-03"], partition_rows={"2026-11-02": 8, "2026-11-03": 0})
    >>> sorted(partition_metadata(r, "2026-11-03", None).items())
    [('dagster/partition_row_count', 0), ('rows_written', 0)]
    """
    md: dict[str, Any] = {}
    if result.partition_rows is not None and key in result.partition_rows:
        md["dagster/partition_row_count"] = md["rows_written"] = int(result.partition_rows[key])
    else:
        md["rows_written"] = "unknown"  # never the run's total under a partition's name
    if isinstance(pdef, dg.TimeWindowPartitionsDefinition):
        window = pdef.time_window_for_partition_key(key)
        md[meta.PARTITION_START] = dg.MetadataValue.timestamp(window.start)
        md[meta.PARTITION_END] = dg.MetadataValue.timestamp(window.end)
    return md


def written_line(result: ModelResult) -> str:
    """The run log's line for a stored model: what this run wrote beside what the output holds.

    >>> written_line(ModelResult("c", "table", "success", rows_written=0, table_rows=2000, duration_s=1.25))
    'c: 0 rows written (table holds 2,000) in 1.2 s'
    >>> written_line(ModelResult("d", "table", "success", rows_written=8, table_rows=20, duration_s=2.0,
    ...                          partitions=["a", "b"], partition_rows={"a": 8, "b": 0}))
    'd: 8 rows written to 2 partitions (a: 8, b: 0; table holds 20) in 2.0 s'
    """
    if result.materialized == "view":
        return f"{result.model}: a view, nothing stored ({result.duration_s:.1f} s)"
    written = "an unknown number of" if result.rows_written is None else f"{result.rows_written:,}"
    held = [] if result.table_rows is None else [f"table holds {result.table_rows:,}"]
    if result.partitions:
        counts = result.partition_rows or {}
        each = ", ".join(f"{k}: {counts[k]:,}" for k in result.partitions[:10] if k in counts)
        more = f", ... {len(result.partitions) - 10} more" if len(result.partitions) > 10 and each else ""
        detail = "; ".join(filter(None, [each + more, *held]))
        noun = "partition" if len(result.partitions) == 1 else "partitions"
        return (f"{result.model}: {written} rows written to {len(result.partitions)} {noun}"
                f"{f' ({detail})' if detail else ''} in {result.duration_s:.1f} s")
    return f"{result.model}: {written} rows written{f' ({held[0]})' if held else ''} in {result.duration_s:.1f} s"
