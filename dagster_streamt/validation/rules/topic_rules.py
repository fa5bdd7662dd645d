"""``rules.topics``: the Kafka topic each stream model writes (streamt's topic and flink models).

The settings a project declares for them (``advanced.topic``, the older top-level ``topic:``,
``defaults.models.topic``, ``defaults.topic``) are checked as streamt checks them, so a project's policy
keeps holding when it moves; a run creates a missing topic with them (:mod:`dagster_streamt.spark.streams.topics`).
"""

from __future__ import annotations

from ...spec.governance import TopicSettings
from ...spec.models import Model
from ...spec.topics import topic_settings
from .context import RuleContext


def _settings(ctx: RuleContext, model: Model) -> tuple[TopicSettings, tuple[str, ...]]:
    """The model's topic settings (own, else defaults) and the YAML path they come from."""
    where: tuple[str, ...] = ("advanced", "topic") if model.advanced.topic is not None else ("topic",)
    return topic_settings(ctx.project, model), where


def check_topics(ctx: RuleContext) -> None:
    tr = ctx.project.rules.topics
    pattern = ctx.regex(tr.naming_pattern, "rules.topics.naming_pattern")
    for name, m in ctx.project.models.items():
        if not m.enabled or m.materialized != "stream":
            continue
        topic, at = _settings(ctx, m)
        topic_name = topic.name or name
        p, rf = topic.partitions, topic.replication_factor
        checks = (
            ("GOV401", p is not None and tr.min_partitions is not None and p < tr.min_partitions,
             f"{p} partitions, fewer than rules.topics.min_partitions={tr.min_partitions}", "partitions"),
            ("GOV402", p is not None and tr.max_partitions is not None and p > tr.max_partitions,
             f"{p} partitions, more than rules.topics.max_partitions={tr.max_partitions}", "partitions"),
            ("GOV403", rf is not None and tr.min_replication_factor is not None and rf < tr.min_replication_factor,
             f"replication factor {rf}, below rules.topics.min_replication_factor={tr.min_replication_factor}",
             "replication_factor"),
            ("GOV404", rf is not None and tr.max_replication_factor is not None and rf > tr.max_replication_factor,
             f"replication factor {rf}, above rules.topics.max_replication_factor={tr.max_replication_factor}",
             "replication_factor"),
        )
        for code, broken, what, key in checks:
            if broken:
                ctx.add(code, "model", name, f"model {name!r}: topic {topic_name!r} has {what}",
                        f"set `advanced.topic.{key}` within the rule", *at, key)
        if pattern is not None and not pattern.search(topic_name):
            ctx.add("GOV405", "model", name, f"model {name!r}: topic name {topic_name!r} does not match "
                    f"rules.topics.naming_pattern {tr.naming_pattern!r}",
                    "set `advanced.topic.name` to a name that matches", *at)
        bad = [f"prefix {x!r}" for x in tr.forbidden_prefixes if topic_name.startswith(x)]
        bad += [f"suffix {x!r}" for x in tr.forbidden_suffixes if topic_name.endswith(x)]
        if bad:
            ctx.add("GOV406", "model", name, f"model {name!r}: topic name {topic_name!r} uses forbidden "
                    f"{', '.join(bad)} (rules.topics)", "rename the topic with `advanced.topic.name`", *at)
        missing = [k for k in tr.required_config if k not in topic.config]
        if missing:
            ctx.add("GOV407", "model", name, f"model {name!r}: topic {topic_name!r} lacks required config "
                    f"{', '.join(missing)} (rules.topics.required_config)",
                    f"add them under `advanced.topic.config` ({', '.join(missing)})", *at)
