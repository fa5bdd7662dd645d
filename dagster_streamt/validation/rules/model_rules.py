"""``rules.models``: documentation, tests, complexity, materializations and tags of models; and the
deprecation dates models declare."""

from __future__ import annotations

from datetime import date

from ...graph.graph import node_id
from ...spec.errors import Severity
from ...spec.models import LEGACY_MATERIALIZATIONS
from .context import RuleContext


def check_models(ctx: RuleContext) -> None:
    mr = ctx.project.rules.models
    tested = ctx.tested()
    pattern = ctx.regex(mr.naming_pattern, "rules.models.naming_pattern")
    allowed = None  # streamt's names (topic, flink, virtual_topic) allow what they run as on Spark
    if mr.allowed_materializations is not None:
        allowed = {LEGACY_MATERIALIZATIONS.get(n, n) for n in mr.allowed_materializations}
    for name, m in ctx.project.models.items():
        if not m.enabled:
            continue
        description = (m.description or "").strip()
        if mr.require_description and not description:
            ctx.add("GOV101", "model", name, f"model {name!r} has no description (rules.models.require_description)",
                    "add `description: ...` to the model")
        if mr.min_description_length is not None and description and len(description) < mr.min_description_length:
            ctx.add("GOV107", "model", name, f"model {name!r}: description has {len(description)} characters, fewer "
                    f"than rules.models.min_description_length={mr.min_description_length}",
                    "say what the model holds and who uses it", "description")
        if mr.require_owner and not m.owner:
            ctx.add("GOV102", "model", name, f"model {name!r} has no owner (rules.models.require_owner)",
                    "add `owner: team-name` to the model or `defaults.models.owner`")
        count = len(tested.get(name, []))
        if mr.require_tests and not count:
            ctx.add("GOV103", "model", name, f"model {name!r} has no tests (rules.models.require_tests)",
                    f"add a test with `model: {name}` under tests/")
        if mr.min_tests is not None and count < mr.min_tests and (count or not mr.require_tests):
            ctx.add("GOV108", "model", name, f"model {name!r} has {count} test(s), fewer than "
                    f"rules.models.min_tests={mr.min_tests}", f"add tests with `model: {name}`")
        if pattern is not None and not pattern.search(name):
            ctx.add("GOV104", "model", name, f"model {name!r} does not match naming pattern {mr.naming_pattern!r}",
                    "rename the model to match rules.models.naming_pattern")
        if mr.max_dependencies is not None:
            deps = list(ctx.graph.upstream_of(node_id("model", name)))
            if len(deps) > mr.max_dependencies:
                ctx.add("GOV105", "model", name, f"model {name!r} has {len(deps)} dependencies, more than "
                        f"rules.models.max_dependencies={mr.max_dependencies}", "split the model into smaller ones")
        if mr.max_sql_length is not None and m.sql is not None and len(m.sql) > mr.max_sql_length:
            ctx.add("GOV109", "model", name, f"model {name!r}: SQL has {len(m.sql)} characters, more than "
                    f"rules.models.max_sql_length={mr.max_sql_length}", "split the query into smaller models", "sql")
        if allowed is not None and (m.materialized or "table") not in allowed:
            ctx.add("GOV106", "model", name, f"model {name!r} is materialized as {m.materialized!r}, not in "
                    f"rules.models.allowed_materializations {mr.allowed_materializations}",
                    f"use one of: {', '.join(mr.allowed_materializations or [])}", "materialized")
        missing = [t for t in mr.required_tags if t not in m.tags]
        if missing:
            ctx.add("GOV110", "model", name, f"model {name!r} lacks required tag(s) {', '.join(missing)} "
                    "(rules.models.required_tags)", f"add `tags: [{', '.join(missing)}]`", "tags")
        if mr.allowed_tags is not None:
            extra = [t for t in m.tags if t not in mr.allowed_tags]
            if extra:
                ctx.add("GOV111", "model", name, f"model {name!r} has tag(s) {', '.join(extra)} not in "
                        "rules.models.allowed_tags", f"use only: {', '.join(mr.allowed_tags)}", "tags")


def check_deprecations(ctx: RuleContext) -> None:
    """A declared deprecation whose sunset date has passed is a warning (not a governance rule)."""
    today = date.today().isoformat()
    for name, m in ctx.project.models.items():
        for version, dep in sorted((m.deprecation or {}).items()):
            if dep.sunset_date and dep.sunset_date[:10] <= today:
                ctx.add("STR044", "model", name, f"model {name!r}: version {version} reached its sunset date "
                        f"{dep.sunset_date}" + (f" ({dep.message})" if dep.message else ""),
                        "move its consumers to the current version and remove the deprecation entry",
                        "deprecation", version, severity=Severity.WARNING)
