"""``models:``: a SQL transformation (or a sink, or a virtual-topic view) and every setting streamt
documents for it, in each of the spellings its docs and code use.

Spellings are folded into one meaning by properties (:attr:`Model.sink_config`,
:attr:`Model.sql_template`, :attr:`Model.masked_columns` ...), so the rest of the code asks one
question and never looks at the alternatives.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from .base import IsoText, Name, OneOf, Options, Strict
from .contract import ModelContract, Ownership
from .flink import FlinkJob
from .governance import TopicSettings
from .source import AdvancedEventTime, Column, EventTime, Freshness, watermark_delay

MaskMethod = Literal["hash", "redact", "partial", "tokenize", "null"]


class FromRef(OneOf):
    """``{ref: model}`` or ``{source: name}``, in exposures, tests and a model's ``from:`` list."""

    one_of_error = "give exactly one of `ref:` or `source:`"
    ref: str | None = None
    source: str | None = None


class SinkConfig(Strict):
    """Where a sink writes: our ``format``/``path``/``options``, or streamt's Kafka Connect
    ``connector`` + ``config`` (mapped to a Spark writer by :mod:`.connectors`).

    ``mode`` unset: a snapshot input (table, view) replaces the export, a stream input appends each
    micro-batch once (upserts with a key); ``append`` keeps every run's rows (history)."""

    format: str | None = None
    path: str | None = None
    mode: Literal["replace", "append", "upsert", "overwrite"] | None = None
    key: list[str] | None = None  # upsert key columns; default: the model's `key:`
    options: Options = Field(default_factory=dict)
    connector: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    tasks_max: int | None = Field(default=None, ge=1)

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


class Connector(Strict):
    """streamt's ``connector: {type, config, tasks_max}`` (top level or under ``advanced``)."""

    type: str
    config: dict[str, Any] = Field(default_factory=dict)
    tasks_max: int | None = Field(default=None, ge=1)


# A model's keys that change none of its rows: what describes it, and what only tells Flink, Conduktor's gateway or
# Connect what to do. An edit to them reruns nothing: not in its code version (Dagster's "unsynced"), not in the
# no-Spark rerun's digest, and `streamt plan`/`streamt diff` class it as metadata. Every other key counts.
DESCRIPTIVE_KEYS = frozenset({"description", "owner", "tags", "meta", "group", "access", "ownership", "deprecation",
                              "freshness", "automation", "version", "flink", "flink_cluster", "connect_cluster",
                              "gateway"})
REAL_TIME_CHECKPOINT = "5 minutes"  # Spark's own default batch duration of Trigger.RealTime
_INTERVAL = re.compile(r"^\d+(\.\d+)?\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?)$", re.I)
_REAL_TIME = re.compile(r"^real[\s_-]?time\b\s*[:=]?\s*(?P<interval>.*)$", re.I)


def real_time_interval(trigger: str | None) -> str | None:
    """The checkpoint interval of ``advanced.spark.trigger: real_time`` (or ``real_time 1 minute``), None
    for every other trigger. Raises ValueError for a real-time trigger whose interval is not one."""
    match = _REAL_TIME.match((trigger or "").strip())
    if match is None:
        return None
    interval = match.group("interval").strip() or REAL_TIME_CHECKPOINT
    if not _INTERVAL.match(interval):
        raise ValueError(f"advanced.spark.trigger {trigger!r}: real_time takes a checkpoint interval like "
                         f"'real_time 1 minute' (default {REAL_TIME_CHECKPOINT}), not {interval!r}")
    return interval


class SparkAdvanced(Strict):
    """``advanced.spark``. ``trigger``: ``available_now`` (default), ``once``, an interval (the pace of
    ``streamt run --continuous``) or ``real_time`` [interval]: Spark's Real-time Mode (Spark >= 4.1) in
    ``streamt run --continuous``, for stateless Kafka-to-topic models (records flow through long-running
    tasks within milliseconds; the interval, default 5 minutes, only spaces checkpoints). A one-shot
    ``streamt run`` of such a model still processes what is there with availableNow and stops."""

    output_mode: Literal["append", "complete", "update"] | None = None
    trigger: str | None = None
    shuffle_partitions: int | None = Field(default=None, ge=1)
    format: str = "delta"  # kept for older projects: tables and stream outputs are Delta (STR090 notes others)
    partition_by: list[str] = Field(default_factory=list)
    conf: dict[str, str] = Field(default_factory=dict)

    @field_validator("trigger")
    @classmethod
    def _real_time(cls, v: str | None) -> str | None:
        real_time_interval(v)  # a malformed real-time interval fails when the project loads
        return v

    @property
    def real_time(self) -> str | None:
        """The checkpoint interval when the model runs in Real-time Mode (``trigger: real_time``), else None."""
        return real_time_interval(self.trigger)


class VirtualTopic(Strict):
    name: str | None = None
    compression: Literal["gzip", "snappy", "lz4", "zstd", "none"] | None = None


class ModelGateway(Strict):
    """Conduktor Gateway settings: a virtual topic is a view on Spark."""

    virtual_topic: VirtualTopic | str | None = None


class MaskPolicy(Strict):
    column: str
    method: MaskMethod = "hash"
    for_roles: list[str] = Field(default_factory=list)


class RolePolicy(Strict):
    roles: list[str] = Field(default_factory=list)
    purpose: str | None = None


class Policy(OneOf):
    """One of ``mask:``, ``allow:`` or ``deny:`` (streamt's security policies)."""

    one_of_error = "a policy is one of `mask:`, `allow:` or `deny:`"
    mask: MaskPolicy | None = None
    allow: RolePolicy | None = None
    deny: RolePolicy | None = None


class Masking(Strict):
    """streamt's ``security.masking`` list: ``{column, policy, config}``."""

    column: str
    policy: MaskMethod | None = None
    method: MaskMethod | None = None
    config: dict[str, Any] = Field(default_factory=dict)


class Security(Strict):
    classification: dict[str, str] = Field(default_factory=dict)
    policies: list[Policy] = Field(default_factory=list)
    masking: list[Masking] = Field(default_factory=list)


class Access(Strict):
    level: Literal["private", "protected", "public"] | None = None
    allowed_groups: list[str] = Field(default_factory=list)


class MlOutput(Strict):
    """Output columns of a model called with ``ML_PREDICT`` (streamt: Confluent Cloud only)."""

    description: str | None = None
    columns: list[Column] = Field(default_factory=list)


class Deprecation(Strict):
    sunset_date: IsoText | None = None
    message: str | None = None


class Advanced(Strict):
    spark: SparkAdvanced = Field(default_factory=SparkAdvanced)
    # streamt's advanced section
    flink: FlinkJob | None = None
    flink_cluster: str | None = None
    connect_cluster: str | None = None
    topic: TopicSettings | None = None
    event_time: AdvancedEventTime | None = None
    gateway: ModelGateway | None = None
    virtual_topic: bool | None = None
    security: Security | None = None
    access: Access | None = None
    connector: Connector | None = None
    sink: SinkConfig | None = None


class PartitionedBy(Strict):
    """Time-window (``granularity`` + ``start``) or static (``values``) partitions of a table model.
    ``column`` assigns each output row to its partition; a run writes only its partitions' rows."""

    column: str | None = None
    granularity: Literal["hour", "day", "week", "month"] | None = None
    start: IsoText | None = None
    end: IsoText | None = None
    timezone: str = "UTC"
    values: list[Annotated[str, BeforeValidator(str)]] | None = None  # YAML's 2026 or true as text
    backfill: Literal["single_run", "per_partition"] = "single_run"

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
    materialized: str | None = None  # None: inferred from the SQL after compiling (streamt's rule)
    sql: str | None = None
    from_: str | list[FromRef] | None = Field(default=None, alias="from")
    sink: SinkConfig | None = None
    connector: Connector | None = None
    columns: list[Column] = Field(default_factory=list)
    event_time: EventTime | None = None
    freshness: Freshness | None = None
    partitioned_by: PartitionedBy | None = None
    automation: Automation | None = None
    advanced: Advanced = Field(default_factory=Advanced)
    group: str | None = None
    access: Literal["private", "protected", "public"] | Access | None = None
    version: int | str | None = None
    key: str | list[str] | None = None
    security: Security | None = None
    gateway: ModelGateway | None = None
    ml_outputs: dict[str, MlOutput] | None = None
    deprecation: dict[str, Deprecation] | None = None
    enabled: bool = True
    meta: dict[str, Any] = Field(default_factory=dict)
    contract: ModelContract | None = None  # streamt's newer DSL: an enforced one is checked at run time
    ownership: Ownership | None = None
    output_schema: dict[str, Any] | None = Field(default=None, alias="schema")  # streamt: subject settings
    # streamt's older top-level spellings of advanced settings
    topic: TopicSettings | str | None = None
    flink: FlinkJob | None = None
    flink_cluster: str | None = None
    connect_cluster: str | None = None

    @field_validator("ml_outputs", mode="before")
    @classmethod
    def _ml_shorthand(cls, v: Any) -> Any:
        """streamt also writes ``{Model: {column: TYPE}}`` for ``{Model: {columns: [{name, type}]}}``."""
        if not isinstance(v, dict):
            return v
        out: dict[Any, Any] = {}
        for name, spec in v.items():
            if isinstance(spec, dict) and not ({"columns", "description"} & spec.keys()) \
                    and all(isinstance(t, str) for t in spec.values()):
                spec = {"columns": [{"name": c, "type": t} for c, t in spec.items()]}
            out[name] = spec
        return out

    @model_validator(mode="after")
    def _partitions_need_a_table(self) -> Model:
        if self.partitioned_by is not None and (self.materialized or "table") != "table":
            raise ValueError(f"`partitioned_by` needs `materialized: table` (this model is {self.materialized}): "
                             "a partition is a batch rewrite of one time window or value; a stream processes "
                             "new data incrementally instead")
        return self

    # -- one meaning for each of streamt's spellings ------------------------------------------
    @property
    def from_inputs(self) -> tuple[tuple[Literal["model", "source"], str], ...]:
        """What ``from:`` names: a model (``from: x`` or ``[{ref: x}]``) or sources (``[{source: y}]``)."""
        if self.from_ is None:
            return ()
        if isinstance(self.from_, str):
            return (("model", self.from_),)
        return tuple(("model", r.ref) if r.ref is not None else ("source", str(r.source)) for r in self.from_)

    @property
    def from_model(self) -> str | None:
        """The model a ``from:``-only sink or view passes through, when ``from`` names one model."""
        inputs = self.from_inputs
        return inputs[0][1] if len(inputs) == 1 and inputs[0][0] == "model" else None

    @property
    def sql_template(self) -> str | None:
        """The SQL to compile: ``sql:``, else a pass-through of what ``from:`` names."""
        if self.sql is not None:
            return self.sql
        if not self.from_inputs:
            return None
        parts = [f'SELECT * FROM {{{{ {"ref" if kind == "model" else "source"}("{name}") }}}}'
                 for kind, name in self.from_inputs]
        return "\nUNION ALL\n".join(parts)

    @property
    def sink_config(self) -> SinkConfig | None:
        """``sink:``, ``connector:``, ``advanced.connector`` or ``advanced.sink``, whichever is written."""
        sink = self.sink or self.advanced.sink
        conn = self.connector or self.advanced.connector
        if sink is None and conn is not None:
            return SinkConfig(connector=conn.type, config=conn.config, tasks_max=conn.tasks_max)
        return sink

    @property
    def is_virtual_topic(self) -> bool:
        """streamt's gateway-backed view: ``gateway.virtual_topic``, ``advanced.gateway`` or
        ``advanced.virtual_topic: true``."""
        gw = self.gateway or self.advanced.gateway
        return bool(self.advanced.virtual_topic) or (gw is not None and gw.virtual_topic is not None)

    @property
    def implied_materialization(self) -> tuple[str, str] | None:
        """(materialization, why) when the YAML alone decides it (streamt's rules that need no SQL):
        partitions, virtual topics, ``from:`` without ``sql:``, a sink block. Else the SQL decides."""
        if self.partitioned_by is not None:
            return "table", "partitioned_by: a partition is a batch rewrite of its window"
        if self.is_virtual_topic:
            return "view", "Gateway virtual topic"
        if self.sql is None and self.from_inputs:
            return "sink", "`from:` without `sql:`"
        if self.sink_config is not None:
            return "sink", "sink configuration"
        return None

    @property
    def topic_settings(self) -> TopicSettings | None:
        """The model's Kafka topic settings (``advanced.topic`` or the older top-level ``topic:``)."""
        if self.advanced.topic is not None:
            return self.advanced.topic
        if isinstance(self.topic, str):
            return TopicSettings(name=self.topic)
        return self.topic

    @property
    def key_columns(self) -> list[str]:
        """The message key / upsert key: the sink's ``key`` or the model's streamt ``key``."""
        sink = self.sink_config
        if sink is not None and sink.key:
            return list(sink.key)
        return [self.key] if isinstance(self.key, str) else list(self.key or [])

    @property
    def access_level(self) -> str | None:
        if isinstance(self.access, str):
            return self.access
        if isinstance(self.access, Access) and self.access.level:
            return self.access.level
        return self.advanced.access.level if self.advanced.access else None

    @property
    def masked_columns(self) -> dict[str, str]:
        """column -> masking method, from every way streamt writes masking (lower-cased names)."""
        out: dict[str, str] = {}
        for sec in (self.security, self.advanced.security):
            if sec is None:
                continue
            for p in sec.policies:
                if p.mask is not None:
                    out[p.mask.column.lower()] = p.mask.method
            for m in sec.masking:
                out[m.column.lower()] = m.policy or m.method or "hash"
        return out

    @property
    def classifications(self) -> dict[str, str]:
        """column -> classification from ``columns[].classification`` and ``security.classification``."""
        out = {c.name.lower(): c.classification for c in self.columns if c.classification}
        for sec in (self.security, self.advanced.security):
            if sec is not None:
                out.update({k.lower(): v for k, v in sec.classification.items()})
        return out

    @property
    def watermark_delay(self) -> str | None:
        return watermark_delay(self.event_time, self.advanced.event_time)
