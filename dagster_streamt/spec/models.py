"""Typed, strict schema of a streamt project (pydantic, ``extra="forbid"``).

Unknown keys are errors (streamt silently dropped them); the loader turns pydantic's errors into
located diagnostics with did-you-mean hints. Objects are frozen: the rest of the code can share
them freely.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
Name = Annotated[str, Field(pattern=NAME_PATTERN, min_length=1, max_length=200)]

# streamt's Kafka/Flink materializations, accepted and mapped to their Spark equivalent.
LEGACY_MATERIALIZATIONS: dict[str, str] = {"topic": "stream", "flink": "stream", "virtual_topic": "view"}
FILE_FORMATS = ("json", "csv", "parquet", "orc", "text", "avro")
SOURCE_FORMATS = (*FILE_FORMATS, "table", "rate", "kafka", "jdbc", "delta")


def stringify_options(v: Any) -> Any:
    """Spark options and conf are strings: YAML's ``true``/``4`` become ``"true"``/``"4"``."""
    if isinstance(v, dict):
        return {str(k): ("true" if x is True else "false" if x is False else str(x)) for k, x in v.items()}
    return v


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ProjectInfo(Strict):
    name: Name
    version: str = "0.1.0"
    description: str | None = None


class ConnectServer(Strict):
    """Start (and reuse) a local Spark Connect server so runs connect in well under a second."""

    start: bool = False
    port: int = Field(default=15002, ge=1, le=65535)


class SparkRuntime(Strict):
    master: str = "local[2]"
    remote: str | None = None
    app_name: str | None = None
    conf: dict[str, str] = Field(default_factory=dict)
    warehouse: str = ".streamt/warehouse"
    checkpoints: str = ".streamt/checkpoints"
    database: str = "default"
    connect_server: ConnectServer = Field(default_factory=ConnectServer)

    @field_validator("conf", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        return stringify_options(v)

    @field_validator("remote")
    @classmethod
    def _remote_url(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith("sc://"):
            raise ValueError(f"remote must be a Spark Connect URL like sc://host:15002, got {v!r}")
        return v


class OpenLineageRuntime(Strict):
    enabled: bool = True
    namespace: str | None = None
    transport: dict[str, Any] = Field(default_factory=lambda: {"type": "file"})
    sensor_interval_seconds: int = Field(default=30, ge=1)


class KafkaRuntime(Strict):
    bootstrap_servers: str
    bootstrap_servers_internal: str | None = None
    security_protocol: str | None = None
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None
    options: dict[str, str] = Field(default_factory=dict)


class AlertsRuntime(Strict):
    webhook_url: str | None = None


class Runtime(Strict):
    spark: SparkRuntime = Field(default_factory=SparkRuntime)
    openlineage: OpenLineageRuntime = Field(default_factory=OpenLineageRuntime)
    kafka: KafkaRuntime | None = None
    alerts: AlertsRuntime = Field(default_factory=AlertsRuntime)
    # when the `<project>_source_freshness` schedule runs the source freshness checks
    freshness_checks_cron: str = "*/15 * * * *"

    @field_validator("freshness_checks_cron")
    @classmethod
    def _cron(cls, v: str) -> str:
        from croniter import croniter

        if len(v.split()) != 5 or not croniter.is_valid(v):
            raise ValueError(f"invalid cron expression {v!r}; use five fields, e.g. \"*/15 * * * *\"")
        return v


class ModelDefaults(Strict):
    materialized: str | None = None
    owner: str | None = None
    group: str | None = None
    tags: list[str] = Field(default_factory=list)


class SourceDefaults(Strict):
    format: str | None = None
    owner: str | None = None


class TestDefaults(Strict):
    severity: Literal["error", "warn"] = "error"


class Defaults(Strict):
    models: ModelDefaults = Field(default_factory=ModelDefaults)
    sources: SourceDefaults = Field(default_factory=SourceDefaults)
    tests: TestDefaults = Field(default_factory=TestDefaults)


class ModelRules(Strict):
    require_description: bool = False
    require_owner: bool = False
    require_tests: bool = False
    naming_pattern: str | None = None
    max_dependencies: int | None = Field(default=None, ge=0)
    allowed_materializations: list[str] | None = None


class SourceRules(Strict):
    require_columns: bool = False
    require_schema: bool = False  # streamt's name for require_columns
    require_description: bool = False
    require_owner: bool = False
    require_freshness: bool = False


class SecurityRules(Strict):
    require_classification: bool = False
    sensitive_columns_require_masking: bool = False


class Rules(Strict):
    models: ModelRules = Field(default_factory=ModelRules)
    sources: SourceRules = Field(default_factory=SourceRules)
    security: SecurityRules = Field(default_factory=SecurityRules)


class Column(Strict):
    name: str = Field(min_length=1)
    type: str | None = None
    description: str | None = None
    classification: str | None = None
    nullable: bool = True
    tags: list[str] = Field(default_factory=list)


class Watermark(Strict):
    strategy: str = "bounded_out_of_orderness"
    max_out_of_orderness_ms: int = Field(default=5000, ge=0)


class EventTime(Strict):
    column: str
    watermark: str | Watermark | None = None
    allowed_lateness_ms: int | None = None

    @property
    def watermark_delay(self) -> str | None:
        """The watermark as a Spark interval string ('10 minutes')."""
        if self.watermark is None or isinstance(self.watermark, str):
            return self.watermark
        return f"{self.watermark.max_out_of_orderness_ms} milliseconds"


class Freshness(Strict):
    warn_after: str | None = None
    error_after: str | None = None
    column: str | None = None
    # streamt's spelling
    max_lag_seconds: int | None = None
    warn_after_seconds: int | None = None

    @field_validator("warn_after", "error_after", "max_lag_seconds", "warn_after_seconds")
    @classmethod
    def _duration(cls, v: str | int | None) -> str | int | None:
        """Checked here so a typo is a located load error, not a failure when Dagster loads the project."""
        from ..checks.params import parse_duration

        if v is not None and parse_duration(v) <= 0:
            raise ValueError(f"a freshness window must be positive, got {v!r}")
        return v


class SourceSensor(Strict):
    """The source's new-data sensor (file sources): on by default, every ``minimum_interval_seconds``."""

    enabled: bool = True
    minimum_interval_seconds: int = Field(default=30, ge=1)


class Source(Strict):
    name: Name
    description: str | None = None
    owner: str | None = None
    tags: list[str] = Field(default_factory=list)
    format: str | None = None
    path: str | None = None
    table: str | None = None
    topic: str | None = None
    options: dict[str, str] = Field(default_factory=dict)
    columns: list[Column] = Field(default_factory=list)
    event_time: EventTime | None = None
    freshness: Freshness | None = None
    sensor: SourceSensor = Field(default_factory=SourceSensor)
    cluster: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("options", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        return stringify_options(v)

    @model_validator(mode="after")
    def _check_location(self) -> Source:
        fmt = self.resolved_format
        if fmt not in SOURCE_FORMATS:
            raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(SOURCE_FORMATS)}")
        if fmt in (*FILE_FORMATS, "delta") and not self.path:
            raise ValueError(f"a {fmt} source needs `path:` (a file or folder, relative to the project)")
        if fmt == "table" and not self.table:
            raise ValueError("a table source needs `table:` (a catalog table name)")
        if fmt == "kafka" and not (self.topic or "subscribe" in self.options):
            raise ValueError("a kafka source needs `topic:`")
        if fmt == "jdbc" and not ({"url", "dbtable"} <= self.options.keys() or "query" in self.options):
            raise ValueError("a jdbc source needs `options: {url: ..., dbtable: ...}`")
        return self

    @property
    def resolved_format(self) -> str:
        if self.format:
            return self.format
        if self.topic:
            return "kafka"
        if self.table:
            return "table"
        return "unset"


class MaskPolicy(Strict):
    column: str
    method: Literal["hash", "redact", "partial", "tokenize", "null"] = "hash"
    for_roles: list[str] = Field(default_factory=list)


class Policy(Strict):
    mask: MaskPolicy


class Security(Strict):
    classification: dict[str, str] = Field(default_factory=dict)
    policies: list[Policy] = Field(default_factory=list)


class SinkConfig(Strict):
    """``mode`` unset: a snapshot input (table, view) replaces the export, a stream input appends each
    micro-batch once (upserts with a key); ``append`` keeps every run's rows (history)."""

    format: str = "parquet"
    path: str | None = None
    mode: Literal["replace", "append", "upsert", "overwrite"] | None = None
    key: list[str] | None = None  # upsert key columns; default: the model's `key:`
    options: dict[str, str] = Field(default_factory=dict)
    # streamt's Kafka Connect spelling, kept for compatibility
    connector: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("options", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        return stringify_options(v)

    @field_validator("key", mode="before")
    @classmethod
    def _key_list(cls, v: Any) -> Any:
        """``key: order_id`` or ``key: "a, b"`` as well as a list."""
        return [k.strip() for k in v.split(",")] if isinstance(v, str) else v

    @field_validator("key")
    @classmethod
    def _key_columns(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and (not v or any(not k for k in v) or len(set(v)) != len(v)):
            raise ValueError("sink `key` must be a non-empty list of distinct column names, e.g. [order_id]")
        return v


class SparkAdvanced(Strict):
    output_mode: Literal["append", "complete", "update"] | None = None
    trigger: str | None = None
    shuffle_partitions: int | None = Field(default=None, ge=1)
    format: str = "parquet"
    partition_by: list[str] = Field(default_factory=list)
    conf: dict[str, str] = Field(default_factory=dict)


class Advanced(Strict):
    spark: SparkAdvanced = Field(default_factory=SparkAdvanced)


class PartitionedBy(Strict):
    """Time-window (``granularity`` + ``start``) or static (``values``) partitions of a table model.
    ``column`` assigns each output row to its partition; a run writes only its partitions' rows."""

    column: str | None = None
    granularity: Literal["hour", "day", "week", "month"] | None = None
    start: str | None = None
    end: str | None = None
    timezone: str = "UTC"
    values: list[str] | None = None
    backfill: Literal["single_run", "per_partition"] = "single_run"

    @field_validator("values", mode="before")
    @classmethod
    def _stringify_values(cls, v: Any) -> Any:
        return [str(x) for x in v] if isinstance(v, list) else v

    @field_validator("start", "end", mode="before")
    @classmethod
    def _iso(cls, v: Any) -> Any:
        """YAML reads ``2026-01-01`` as a date."""
        return v.isoformat() if hasattr(v, "isoformat") else v

    @model_validator(mode="after")
    def _kind(self) -> PartitionedBy:
        if not self.column:
            raise ValueError("partitioned_by needs `column:` (the output column that says which partition a row "
                             "belongs to, e.g. `column: order_ts`)")
        if self.values is not None:
            if self.granularity or self.start or self.end:
                raise ValueError("give either `values` (static partitions) or `granularity` + `start` (time "
                                 "partitions), not both")
            if not self.values or len(set(self.values)) != len(self.values):
                raise ValueError("partitioned_by `values` must be a non-empty list of distinct values")
            return self
        if not (self.granularity and self.start):
            raise ValueError("partitioned_by needs `granularity` and `start` (time) or `values` (static)")
        from datetime import datetime
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {self.timezone!r}; use an IANA name like UTC or "
                             "Europe/Paris") from None
        bounds = []
        for key in ("start", "end"):
            text = getattr(self, key)
            if text is None:
                continue
            try:
                bounds.append(datetime.fromisoformat(str(text)))
            except ValueError:
                raise ValueError(f"partitioned_by `{key}: {text}` is not a date; write it like 2026-01-01 "
                                 "or 2026-01-01T06:00") from None
        if len(bounds) == 2 and bounds[1] <= bounds[0]:
            raise ValueError("partitioned_by `end` must be after `start`")
        return self


class Automation(Strict):
    eager: bool = False
    on_cron: str | None = None


class Model(Strict):
    name: Name
    description: str | None = None
    owner: str | None = None
    tags: list[str] = Field(default_factory=list)
    materialized: str | None = None
    sql: str | None = None
    from_: str | None = Field(default=None, alias="from")
    sink: SinkConfig | None = None
    columns: list[Column] = Field(default_factory=list)
    event_time: EventTime | None = None
    freshness: Freshness | None = None
    partitioned_by: PartitionedBy | None = None
    automation: Automation | None = None
    advanced: Advanced = Field(default_factory=Advanced)
    group: str | None = None
    access: Literal["private", "protected", "public"] | None = None
    version: int | str | None = None
    key: str | None = None
    security: Security | None = None
    enabled: bool = True
    meta: dict[str, Any] = Field(default_factory=dict)
    # streamt's Kafka/Flink settings: accepted so projects load, unused on Spark.
    topic: dict[str, Any] | str | None = None
    flink: dict[str, Any] | None = None
    flink_cluster: str | None = None
    connect_cluster: str | None = None

    @model_validator(mode="after")
    def _partitions_need_a_table(self) -> Model:
        if self.partitioned_by is not None and (self.materialized or "table") != "table":
            raise ValueError(f"`partitioned_by` needs `materialized: table` (this model is {self.materialized}): "
                             "a partition is a batch rewrite of one time window or value; a stream processes "
                             "new data incrementally instead")
        return self


class NodeRef(Strict):
    """``{ref: model}`` or ``{source: name}`` in exposures and tests."""

    ref: str | None = None
    source: str | None = None

    @model_validator(mode="after")
    def _one(self) -> NodeRef:
        if (self.ref is None) == (self.source is None):
            raise ValueError("give exactly one of `ref:` or `source:`")
        return self


class Test(Strict):
    name: Name
    model: str | None = None
    source: str | None = None
    type: Literal["schema", "sample", "continuous"] = "sample"
    severity: Literal["error", "warn", "warning"] | None = None
    description: str | None = None
    assertions: list[dict[str, Any]] = Field(min_length=1)
    sample_size: int | None = Field(default=None, ge=1)
    tags: list[str] = Field(default_factory=list)
    enabled: bool = True
    on_failure: dict[str, Any] | None = None
    flink_cluster: str | None = None

    @model_validator(mode="after")
    def _target(self) -> Test:
        if (self.model is None) == (self.source is None):
            raise ValueError("a test targets exactly one of `model:` or `source:`")
        for i, a in enumerate(self.assertions):
            if len(a) != 1:
                raise ValueError(
                    f"assertion #{i + 1} must be a mapping with one key (the assertion name), got {sorted(a)}"
                )
        return self


class Exposure(Strict):
    name: Name
    type: str = "application"
    role: Literal["producer", "consumer", "both"] | None = None
    description: str | None = None
    owner: str | None = None
    url: str | None = None
    repo: str | None = None
    language: str | None = None
    tool: str | None = None
    tags: list[str] = Field(default_factory=list)
    consumes: list[NodeRef] = Field(default_factory=list)
    depends_on: list[NodeRef | str] = Field(default_factory=list)
    produces: list[NodeRef] = Field(default_factory=list)
    consumer_group: str | None = None
    sla: dict[str, Any] | None = None
    contracts: dict[str, Any] | None = None
    access: dict[str, Any] | None = None
    schedule: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class Schedule(Strict):
    name: Name
    cron: str
    select: str
    timezone: str = "UTC"
    description: str | None = None
    enabled: bool = True


SECTION_MODELS: dict[str, type[Strict]] = {
    "sources": Source,
    "models": Model,
    "tests": Test,
    "exposures": Exposure,
    "schedules": Schedule,
}
