"""Kafka topics of a project: which topic a model publishes, and where a topic lives in local mode.

With ``runtime.kafka.local_dir`` every topic is the folder ``<local_dir>/<topic>/`` of JSON-lines
files (relative to the project), so a streamt project runs on a laptop or in tests without a broker.
"""

from __future__ import annotations

from pathlib import Path

from .governance import TopicSettings
from .models import Model
from .project import Project


def local_dir(project: Project) -> str | None:
    """``runtime.kafka.local_dir`` as written (relative to the project), or None with a broker."""
    kafka = project.runtime.kafka
    return kafka.local_dir if kafka is not None else None


def topic_folder(project: Project, topic: str) -> Path | None:
    """The folder holding a local topic, or None when topics live on a broker."""
    root = local_dir(project)
    return None if root is None else project.resolve_path(root) / topic


def model_topic(project: Project, model: Model) -> str | None:
    """The topic a model also writes, when the project uses Kafka: ``advanced.topic.name`` or the older
    ``topic.name``, else the model name. streamt writes one for every topic and Flink model, so a stream
    model has one, and so has a model streamt would run on Flink that Spark runs as a table (inferred:
    a join of two streams without a time bound), which publishes its whole result each run."""
    if project.runtime.kafka is None:
        return None
    inferred_table = model.materialized == "table" and model.name in project.inferred and \
        model.partitioned_by is None and model.sink_config is None
    if model.materialized != "stream" and not inferred_table:
        return None
    settings = model.topic_settings
    return settings.name if settings is not None and settings.name else model.name


def topic_settings(project: Project, model: Model) -> TopicSettings:
    """What the model's topic is created with and checked against, as streamt's compiler decides it: each
    of the model's own settings, else the project's default topic (``defaults.topic``, or without it
    ``defaults.models.topic``); configs are the default's with the model's over them. Unset partitions or
    replication are left to the broker (streamt says 1 and 1, which a managed cluster may refuse)."""
    own = model.topic_settings or TopicSettings()
    default = project.defaults.topic or project.defaults.models.topic or TopicSettings()
    return TopicSettings(name=own.name, partitions=own.partitions or default.partitions,
                         replication_factor=own.replication_factor or default.replication_factor,
                         config={**default.config, **own.config})


def uses_kafka_broker(project: Project) -> bool:
    """Whether a run of ``project`` talks to a Kafka broker (a Kafka source or sink, or a stream model
    publishing its topic, with ``bootstrap_servers`` and no ``local_dir``): its Spark then needs the
    Kafka connector, which other projects do not pay for."""
    kafka = project.runtime.kafka
    if kafka is None or kafka.local_dir is not None or not kafka.bootstrap_servers:
        return False
    if any(s.resolved_format == "kafka" for s in project.sources.values()):
        return True
    for model in project.models.values():
        sink = model.sink_config
        if model_topic(project, model) is not None or (sink is not None and sink.format == "kafka"):
            return True
    return False
