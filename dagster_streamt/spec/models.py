"""Typed, strict schema of a streamt project (pydantic, ``extra="forbid"``).

Every key streamt documents is accepted (streamt's own spellings next to ours); unknown keys are
errors, which the loader turns into located diagnostics with did-you-mean hints. Objects are
frozen: the rest of the code can share them freely. The parts live in their own modules; this one
gathers them so callers import from one place.
"""

from __future__ import annotations

from .base import NAME_HINT, NAME_PATTERN, Name, Strict, stringify_options
from .datatest import Action, AlertAction, OnFailure, Test
from .exposure import Exposure, NodeRef, Schedule, Sla
from .flink import FlinkJob
from .governance import Defaults, ModelDefaults, Rules, SourceDefaults, TestDefaults, TopicSettings
from .model import (
    Access,
    Advanced,
    Automation,
    Connector,
    FromRef,
    MaskPolicy,
    Model,
    PartitionedBy,
    Policy,
    Security,
    SinkConfig,
    SparkAdvanced,
)
from .runtime import ConnectServer, KafkaRuntime, OpenLineageRuntime, Runtime, SparkRuntime
from .source import FILE_FORMATS, SOURCE_FORMATS, Column, EventTime, Freshness, Source, Watermark


class ProjectInfo(Strict):
    name: Name
    version: str = "0.1.0"
    description: str | None = None


# streamt's Kafka/Flink materializations, accepted and mapped to their Spark equivalent.
LEGACY_MATERIALIZATIONS: dict[str, str] = {"topic": "stream", "flink": "stream", "virtual_topic": "view"}

SECTION_MODELS: dict[str, type[Strict]] = {
    "sources": Source,
    "models": Model,
    "tests": Test,
    "exposures": Exposure,
    "schedules": Schedule,
}
KIND_OF_SECTION = {"sources": "source", "models": "model", "tests": "test", "exposures": "exposure",
                   "schedules": "schedule"}

__all__ = [
    "FILE_FORMATS", "LEGACY_MATERIALIZATIONS", "NAME_HINT", "NAME_PATTERN", "SECTION_MODELS", "SOURCE_FORMATS",
    "Access", "Action", "Advanced", "AlertAction", "Automation", "Column", "ConnectServer", "Connector",
    "Defaults", "EventTime", "Exposure", "FlinkJob", "Freshness", "FromRef", "KafkaRuntime", "MaskPolicy",
    "Model", "ModelDefaults", "NodeRef", "OnFailure", "OpenLineageRuntime", "PartitionedBy", "Policy",
    "ProjectInfo", "Rules", "Runtime", "Security", "SinkConfig", "Sla", "Source", "SourceDefaults",
    "SparkAdvanced", "SparkRuntime", "Strict", "Test", "TestDefaults", "TopicSettings", "Watermark",
    "stringify_options",
]
