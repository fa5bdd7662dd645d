"""``rules.tests``: coverage of data tests (schema tests, assertions per test, continuous monitoring of
critical models)."""

from __future__ import annotations

from .context import RuleContext

CRITICAL_TAGS = ("critical", "tier-1", "tier1")


def check_test_rules(ctx: RuleContext) -> None:
    tr = ctx.project.rules.tests
    tests = [t for t in ctx.project.tests.values() if t.enabled]
    if tr.min_assertions_per_test is not None:
        for t in tests:
            if len(t.assertions) < tr.min_assertions_per_test:
                ctx.add("GOV602", "test", t.name, f"test {t.name!r} has {len(t.assertions)} assertion(s), fewer than "
                        f"rules.tests.min_assertions_per_test={tr.min_assertions_per_test}", "add assertions",
                        "assertions")
    for name, m in ctx.project.models.items():
        if not m.enabled:
            continue
        mine = [t for t in tests if t.model == name]
        if tr.require_schema_tests and not any(t.type == "schema" for t in mine):
            ctx.add("GOV601", "model", name, f"model {name!r} has no schema test (rules.tests.require_schema_tests)",
                    f"add a test with `model: {name}` and `type: schema`")
        if tr.require_continuous_for_critical and set(m.tags) & set(CRITICAL_TAGS) and m.materialized == "stream" \
                and not any(t.type == "continuous" for t in mine):
            ctx.add("GOV603", "model", name, f"model {name!r} is tagged critical but has no continuous test "
                    "(rules.tests.require_continuous_for_critical)",
                    f"add a test with `model: {name}` and `type: continuous`")
