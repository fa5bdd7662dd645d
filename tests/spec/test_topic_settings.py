"""What a model's topic is created with (and the topic rules check), as streamt's compiler decides it:
each of the model's own settings, else ``defaults.topic`` (or, without it, ``defaults.models.topic``)."""

from __future__ import annotations

from typing import Any

from dagster_streamt.spec.topics import model_topic, topic_settings


def test_own_settings_over_the_default_topic(tmp_project: Any) -> None:
    project = tmp_project({
        "runtime": {"kafka": {"bootstrap_servers": "b:9092"}},
        "defaults": {"topic": {"partitions": 3, "replication_factor": 2, "config": {"retention.ms": 1000}},
                     "models": {"topic": {"partitions": 6}}},
        "sources": [{"name": "s", "topic": "raw"}],
        "models": [
            {"name": "plain", "materialized": "topic", "sql": 'SELECT * FROM {{ source("s") }}'},
            {"name": "own", "materialized": "stream", "sql": 'SELECT * FROM {{ source("s") }}',
             "advanced": {"topic": {"name": "own.v1", "replication_factor": 1,
                                    "config": {"cleanup.policy": "compact"}}}},
            {"name": "legacy", "materialized": "flink", "topic": "legacy.v1", "sql": 'SELECT * FROM {{ source("s") }}'},
        ]})
    plain, own, legacy = (project.models[n] for n in ("plain", "own", "legacy"))
    assert topic_settings(project, plain).model_dump() == {
        "name": None, "partitions": 3, "replication_factor": 2, "config": {"retention.ms": 1000}}
    assert topic_settings(project, own).model_dump() == {
        "name": "own.v1", "partitions": 3, "replication_factor": 1,
        "config": {"retention.ms": 1000, "cleanup.policy": "compact"}}
    assert (topic_settings(project, legacy).name, topic_settings(project, legacy).partitions) == ("legacy.v1", 3)
    assert [model_topic(project, m) for m in (plain, own, legacy)] == ["plain", "own.v1", "legacy.v1"]


def test_model_defaults_count_only_without_a_project_default_topic(tmp_project: Any) -> None:
    project = tmp_project({
        "runtime": {"kafka": {"bootstrap_servers": "b:9092"}},
        "defaults": {"models": {"topic": {"partitions": 6}}},
        "sources": [{"name": "s", "topic": "raw"}],
        "models": [{"name": "m", "materialized": "topic", "sql": 'SELECT * FROM {{ source("s") }}'}]})
    settings = topic_settings(project, project.models["m"])
    assert (settings.partitions, settings.replication_factor, settings.config) == (6, None, {})
