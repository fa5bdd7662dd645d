"""``sources:``: external data (Kafka topics, files, tables, JDBC), their columns, event time and
freshness, in streamt's spellings and ours."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..core.durations import parse_duration
from .base import Name, Options, Strict
from .contract import Ownership

FILE_FORMATS = ("json", "csv", "parquet", "orc", "text", "avro")
SOURCE_FORMATS = (*FILE_FORMATS, "table", "rate", "kafka", "jdbc", "delta")
STREAMABLE_FORMATS = (*FILE_FORMATS, "table", "rate", "kafka", "delta")  # jdbc is batch only
ColumnTest = str | dict[str, Any]  # streamt's column shorthand: `- not_null` or `- range: {min: 0}`


class Column(Strict):
    name: str = Field(min_length=1)
    type: str | None = None  # Spark or Flink SQL type (STRING, TIMESTAMP(3), DECIMAL(10, 2) ...)
    description: str | None = None
    classification: str | None = None
    nullable: bool = True
    tags: list[str] = Field(default_factory=list)
    proctime: bool = False  # streamt: a processing-time attribute, filled with the time the row is read
    tests: list[ColumnTest] = Field(default_factory=list)


class Watermark(Strict):
    strategy: Literal["bounded_out_of_orderness", "monotonously_increasing", "monotonous", "custom"] = \
        "bounded_out_of_orderness"
    max_out_of_orderness_ms: int = Field(default=5000, ge=0)
    expression: str | None = None  # streamt's custom strategy: `ts - INTERVAL '5' SECOND`


class EventTime(Strict):
    column: str
    watermark: str | Watermark | None = None
    allowed_lateness_ms: int | None = Field(default=None, ge=0)

    @property
    def watermark_delay(self) -> str | None:
        """The watermark delay as a Spark interval string ('10 minutes')."""
        return watermark_delay(self, None)


class AdvancedEventTime(Strict):
    """streamt's ``advanced.event_time``: watermark details kept apart from the column."""

    watermark: Watermark | None = None
    allowed_lateness_ms: int | None = Field(default=None, ge=0)


def _interval_ms(expression: str) -> int | None:
    """Milliseconds of ``ts - INTERVAL 'n' UNIT`` (streamt's custom watermark expression)."""
    import re

    m = re.search(r"INTERVAL\s+'(\d+)'\s+(MILLISECOND|SECOND|MINUTE|HOUR|DAY)S?", expression, re.I)
    if not m:
        return None
    unit = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
    return int(m.group(1)) * unit[m.group(2).upper()]


def watermark_delay(event_time: EventTime | None, advanced: AdvancedEventTime | None) -> str | None:
    """How late an event may be, as a Spark interval: the watermark's bound plus ``allowed_lateness_ms``.

    Spark has one knob (the watermark delay) where Flink has two (watermark and allowed lateness):
    a window stays open for both, so a late event Flink would still accept is also counted here.
    """
    mark = advanced.watermark if advanced and advanced.watermark else (event_time.watermark if event_time else None)
    lateness = (advanced.allowed_lateness_ms if advanced and advanced.allowed_lateness_ms is not None
                else event_time.allowed_lateness_ms if event_time else None)
    if isinstance(mark, str):
        return mark if not lateness else f"{mark} {lateness} milliseconds"
    if mark is None and not lateness:
        return None
    delay_ms = 0
    if isinstance(mark, Watermark):
        if mark.strategy == "custom" and mark.expression:
            delay_ms = _interval_ms(mark.expression) or 0
        elif mark.strategy in ("bounded_out_of_orderness", "custom"):
            delay_ms = mark.max_out_of_orderness_ms
    return f"{delay_ms + (lateness or 0)} milliseconds"


class Freshness(Strict):
    warn_after: str | int | None = None
    error_after: str | int | None = None
    column: str | None = None
    # streamt's spelling
    max_lag_seconds: int | None = None
    warn_after_seconds: int | None = None

    @field_validator("warn_after", "error_after", "max_lag_seconds", "warn_after_seconds")
    @classmethod
    def _duration(cls, v: str | int | None) -> str | int | None:
        """Checked here so a typo is a located load error, not a failure when Dagster loads the project."""
        if v is not None and parse_duration(v) <= 0:
            raise ValueError(f"a freshness window must be positive, got {v!r}")
        return v


class SourceSensor(Strict):
    """The source's new-data sensor (file sources, and Kafka sources on a broker), ticking every
    ``minimum_interval_seconds``. ``enabled`` None follows ``runtime.automations.default_status``
    (stopped unless the project says otherwise): opening the UI must not start Spark runs."""

    enabled: bool | None = None
    minimum_interval_seconds: int = Field(default=30, ge=1)


class SchemaRef(Strict):
    """streamt's ``schema:``: a registry subject, or an inline Avro / JSON Schema ``definition``."""

    registry: str | None = None
    subject: str | None = None
    format: Literal["avro", "json", "protobuf"] | None = None
    definition: str | dict[str, Any] | None = None
    version: str | int | None = None


class SourceAdvanced(Strict):
    event_time: AdvancedEventTime | None = None


class Source(Strict):
    name: Name
    description: str | None = None
    owner: str | None = None
    tags: list[str] = Field(default_factory=list)
    format: str | None = None
    path: str | None = None
    table: str | None = None
    topic: str | None = None
    options: Options = Field(default_factory=dict)
    columns: list[Column] = Field(default_factory=list)
    event_time: EventTime | None = None
    freshness: Freshness | None = None
    sensor: SourceSensor = Field(default_factory=SourceSensor)
    cluster: str | None = None
    schema_: SchemaRef | None = Field(default=None, alias="schema")
    advanced: SourceAdvanced | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    contract: dict[str, Any] | None = None  # streamt's producer contract (version, SLA, contact): metadata
    ownership: Ownership | None = None

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
        if self.advanced and self.advanced.event_time and self.event_time is None:
            raise ValueError("`advanced.event_time` sets the watermark of the event-time column; name that column "
                             "with `event_time: {column: ...}`")
        return self

    @property
    def resolved_format(self) -> str:
        return self.format or ("kafka" if self.topic else "table" if self.table else "unset")

    @property
    def watermark_delay(self) -> str | None:
        return watermark_delay(self.event_time, self.advanced.event_time if self.advanced else None)
