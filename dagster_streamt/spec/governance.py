"""``defaults:`` and ``rules:``: project-wide settings and the governance rules ``streamt validate``
enforces (every rule streamt documents, see :mod:`dagster_streamt.rules`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from ..core.durations import parse_duration
from .base import Strict


class TopicSettings(Strict):
    """Kafka topic settings (``defaults.topic``, ``advanced.topic``): checked by the topic rules."""

    name: str | None = None
    partitions: int | None = Field(default=None, ge=1)
    replication_factor: int | None = Field(default=None, ge=1)
    config: dict[str, Any] = Field(default_factory=dict)


class ModelDefaults(Strict):
    materialized: str | None = None
    owner: str | None = None
    group: str | None = None
    tags: list[str] = Field(default_factory=list)
    # streamt's: the Flink/Kafka cluster models deploy to, and default topic settings
    cluster: str | None = None
    flink_cluster: str | None = None
    topic: TopicSettings | None = None


class SourceDefaults(Strict):
    format: str | None = None
    owner: str | None = None


class TestDefaults(Strict):
    severity: Literal["error", "warn", "warning"] = "error"
    sample_size: int | None = Field(default=None, ge=1)
    flink_cluster: str | None = None


class Defaults(Strict):
    models: ModelDefaults = Field(default_factory=ModelDefaults)
    sources: SourceDefaults = Field(default_factory=SourceDefaults)
    tests: TestDefaults = Field(default_factory=TestDefaults)
    topic: TopicSettings | None = None


def _duration(v: Any) -> Any:
    if v is not None and parse_duration(v) <= 0:
        raise ValueError(f"a duration must be positive, got {v!r}")
    return v


Window = Annotated[str | int | None, AfterValidator(_duration)]


class TopicRules(Strict):
    min_partitions: int | None = Field(default=None, ge=1)
    max_partitions: int | None = Field(default=None, ge=1)
    min_replication_factor: int | None = Field(default=None, ge=1)
    max_replication_factor: int | None = Field(default=None, ge=1)
    required_config: list[str] = Field(default_factory=list)
    naming_pattern: str | None = None
    forbidden_prefixes: list[str] = Field(default_factory=list)
    forbidden_suffixes: list[str] = Field(default_factory=list)


class ModelRules(Strict):
    require_description: bool = False
    require_owner: bool = False
    require_tests: bool = False
    naming_pattern: str | None = None
    max_dependencies: int | None = Field(default=None, ge=0)
    allowed_materializations: list[str] | None = None
    min_tests: int | None = Field(default=None, ge=0)
    min_description_length: int | None = Field(default=None, ge=0)
    max_sql_length: int | None = Field(default=None, ge=1)
    required_tags: list[str] = Field(default_factory=list)
    allowed_tags: list[str] | None = None


class SourceRules(Strict):
    require_columns: bool = False
    require_schema: bool = False  # streamt: a schema (registry subject, inline definition or columns)
    require_description: bool = False
    require_owner: bool = False
    require_freshness: bool = False
    max_freshness_warn: Window = None
    max_freshness_error: Window = None


class SecurityRules(Strict):
    require_classification: bool = False
    sensitive_columns_require_masking: bool = False
    allowed_classifications: list[str] | None = None
    highly_sensitive_columns_require_encryption: bool = False
    pii_column_patterns: list[str] = Field(default_factory=list)
    require_access_level: bool = False


class ExposureRules(Strict):
    require_description: bool = False
    require_owner: bool = False
    require_sla: bool = False
    require_contacts: bool = False
    max_latency_p99_ms: int | None = Field(default=None, ge=0)
    min_availability: float | None = Field(default=None, ge=0, le=100)


class TestRules(Strict):
    require_schema_tests: bool = False
    min_assertions_per_test: int | None = Field(default=None, ge=0)
    require_continuous_for_critical: bool = False


class Rules(Strict):
    topics: TopicRules = Field(default_factory=TopicRules)
    models: ModelRules = Field(default_factory=ModelRules)
    sources: SourceRules = Field(default_factory=SourceRules)
    security: SecurityRules = Field(default_factory=SecurityRules)
    exposures: ExposureRules = Field(default_factory=ExposureRules)
    tests: TestRules = Field(default_factory=TestRules)


class EnvironmentInfo(Strict):
    """streamt's ``environment:`` header of ``environments/<env>.yml``; ``name`` must match the file."""

    name: str | None = None
    description: str | None = None
    protected: bool = False


class Safety(Strict):
    """streamt's deployment guards (``streamt apply``); kept, with no effect on Spark runs."""

    confirm_apply: bool | None = None
    allow_destructive: bool | None = None
