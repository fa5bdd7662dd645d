"""What one model run did, as plain data: the Dagster layer turns it into materialization metadata,
the CLI prints it. Nothing here touches Spark."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from .object_stores import delta_rs_uri, is_object_uri

Status = Literal["success", "failed", "skipped"]


@dataclass(frozen=True)
class ModelResult:
    model: str
    materialized: str  # table | view | stream | sink
    status: Status
    rows_written: int | None = None  # rows this run wrote (None: a view stores nothing, or unknown)
    table_rows: int | None = None  # rows the stored output holds after this run (None: unknown or not stored)
    input_rows: int | None = None  # rows read from storage (sources, warehouse tables)
    batches: int | None = None  # micro-batches that processed data (streams, streaming sinks)
    duration_s: float = 0.0
    schema: list[tuple[str, str]] = field(default_factory=list)  # output (column, Spark SQL type)
    location: str | None = None  # absolute path (or external target) of the output
    last_watermark: str | None = None
    input_rows_per_second: float | None = None
    processed_rows_per_second: float | None = None
    arrival_lag_s: float | None = None  # streams: end of the last batch - newest arrival of its input rows
    quarantined_rows: int = 0  # malformed input records diverted to <source>__quarantine
    error: str | None = None  # why it failed or was skipped
    sql: str | None = None  # the Spark SQL that ran (rendered against this run's views)
    partitions: list[str] | None = None  # partition keys this run replaced (partitioned tables)
    # rows each of those partitions holds after the run (it replaced them whole: also the rows written to
    # each), from the Delta log's file statistics; None when the log cannot say
    partition_rows: dict[str, int] | None = None
    rows_outside_partitions: int = 0  # output rows that belong to no partition of this run (not written)
    topic: str | None = None  # the Kafka topic (or local topic folder) the model also wrote
    topic_rows: int | None = None  # rows published to it this run
    refresh: str | None = None  # tables: full | unchanged | append | merge (how this run brought it up to date)
    refresh_note: str | None = None  # why a full rebuild, or what the increment was
    delta_version: int | None = None  # the output is a Delta table at ``location``: its version after this run

    @property
    def read_line(self) -> str | None:
        """How any program reads a Delta output without Spark, in one line (delta-rs); None otherwise."""
        if self.delta_version is None or not self.location:
            return None
        location = delta_rs_uri(self.location)
        if is_object_uri(self.location):  # an object store: delta-rs reads the credentials its SDK does
            return (f"deltalake.DeltaTable({json.dumps(location)}, storage_options={{...}}).to_pandas()  "
                    "# or the store's AWS_* / GOOGLE_* / AZURE_* environment variables")
        return f"deltalake.DeltaTable({json.dumps(location)}).to_pandas()"

    @property
    def ok(self) -> bool:
        return self.status == "success"


def failed(model: str, materialized: str, error: str, duration_s: float = 0.0) -> ModelResult:
    return ModelResult(model=model, materialized=materialized, status="failed", error=error,
                       duration_s=duration_s)


def skipped(model: str, materialized: str, reason: str) -> ModelResult:
    return ModelResult(model=model, materialized=materialized, status="skipped", error=reason)
