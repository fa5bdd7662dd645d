"""``exposures:`` (who reads or writes the project's data) and ``schedules:``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import Name, Strict, Text
from .model import FromRef, RolePolicy
from .source import Freshness

NodeRef = FromRef  # ``{ref: model}`` or ``{source: name}``


class Sla(Strict):
    availability: Text | None = None
    max_produce_latency_ms: int | None = Field(default=None, ge=0)
    max_end_to_end_latency_ms: int | None = Field(default=None, ge=0)
    max_lag_messages: int | None = Field(default=None, ge=0)
    max_lag_minutes: float | None = Field(default=None, ge=0)
    max_lag_seconds: float | None = Field(default=None, ge=0)
    max_error_rate: float | None = Field(default=None, ge=0, le=1)
    latency_p50_ms: float | None = Field(default=None, ge=0)
    latency_p99_ms: float | None = Field(default=None, ge=0)
    throughput_per_second: float | None = Field(default=None, ge=0)
    freshness_seconds: float | None = Field(default=None, ge=0)

    @property
    def availability_percent(self) -> float | None:
        if self.availability is None:
            return None
        try:
            return float(self.availability.rstrip("%").strip())
        except ValueError:
            return None


class Contract(Strict):
    schema_: str | None = Field(default=None, alias="schema")
    compatibility: str | None = None


class Contact(Strict):
    name: str | None = None
    email: str | None = None
    slack: str | None = None
    pagerduty: str | None = None


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
    sla: Sla | None = None
    contracts: Contract | None = None
    access: RolePolicy | None = None  # the roles that read it, and why
    access_justification: str | None = None  # streamt's scenario tests: why a consumer reads PII
    contacts: list[Contact] = Field(default_factory=list)
    freshness: Freshness | None = None
    schedule: str | None = None
    data_requirements: dict[str, Any] | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class Schedule(Strict):
    name: Name
    cron: str
    select: str
    timezone: str = "UTC"
    description: str | None = None
    enabled: bool | None = None  # None: runtime.automations.default_status (stopped by default)
