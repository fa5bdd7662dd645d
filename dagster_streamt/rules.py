"""Governance rules (``rules:``): violations are errors with stable GOV codes."""

from __future__ import annotations

import re

from .graph.graph import Graph, node_id
from .spec.errors import Diagnostics
from .spec.project import Project


def check_rules(project: Project, graph: Graph) -> Diagnostics:
    diags = Diagnostics()
    mr, sr, sec = project.rules.models, project.rules.sources, project.rules.security
    tested = {t.model for t in project.tests.values() if t.model and t.enabled}
    pattern = None
    if mr.naming_pattern:
        try:
            pattern = re.compile(mr.naming_pattern)
        except re.error as exc:
            file, line = project.where("settings", "rules")
            diags.add("STR051", f"rules.models.naming_pattern is not a valid regular expression: {exc}",
                      file=file or "stream_project.yml", line=line, hint="fix the pattern (Python re syntax)")
    for name, m in project.models.items():
        if not m.enabled:
            continue
        file, line = project.where("model", name)
        if mr.require_description and not (m.description or "").strip():
            diags.add("GOV101", f"model {name!r} has no description (rules.models.require_description)",
                      file=file, line=line, hint="add `description: ...` to the model")
        if mr.require_owner and not m.owner:
            diags.add("GOV102", f"model {name!r} has no owner (rules.models.require_owner)", file=file, line=line,
                      hint="add `owner: team-name` to the model or `defaults.models.owner`")
        if mr.require_tests and name not in tested:
            diags.add("GOV103", f"model {name!r} has no tests (rules.models.require_tests)", file=file, line=line,
                      hint=f"add a test with `model: {name}` under tests/")
        if pattern is not None and not pattern.search(name):
            diags.add("GOV104", f"model {name!r} does not match naming pattern {mr.naming_pattern!r}",
                      file=file, line=line, hint="rename the model to match rules.models.naming_pattern")
        if mr.max_dependencies is not None:
            deps = [u for u in graph.upstream_of(node_id("model", name))]
            if len(deps) > mr.max_dependencies:
                diags.add("GOV105", f"model {name!r} has {len(deps)} dependencies, more than "
                          f"rules.models.max_dependencies={mr.max_dependencies}", file=file, line=line,
                          hint="split the model into smaller ones")
        if mr.allowed_materializations is not None and m.materialized not in mr.allowed_materializations:
            diags.add("GOV106", f"model {name!r} is materialized as {m.materialized!r}, not in "
                      f"rules.models.allowed_materializations {mr.allowed_materializations}",
                      file=file, line=project.where("model", name, "materialized")[1],
                      hint=f"use one of: {', '.join(mr.allowed_materializations)}")
    for name, s in project.sources.items():
        file, line = project.where("source", name)
        if (sr.require_columns or sr.require_schema) and not s.columns:
            diags.add("GOV201", f"source {name!r} declares no columns (rules.sources.require_columns)",
                      file=file, line=line, hint="add `columns: [{name: ..., type: ...}]`")
        if sr.require_description and not (s.description or "").strip():
            diags.add("GOV202", f"source {name!r} has no description", file=file, line=line,
                      hint="add `description: ...`")
        if sr.require_owner and not s.owner:
            diags.add("GOV203", f"source {name!r} has no owner", file=file, line=line, hint="add `owner: team-name`")
        if sr.require_freshness and s.freshness is None:
            diags.add("GOV204", f"source {name!r} has no freshness SLA", file=file, line=line,
                      hint="add `freshness: {warn_after: 1h, error_after: 6h}`")
        if sec.require_classification:
            for i, c in enumerate(s.columns):
                if not c.classification:
                    diags.add("GOV301", f"source {name!r} column {c.name!r} has no classification",
                              file=file, line=project.where("source", name, "columns", i)[1],
                              hint="add `classification: public|internal|confidential|sensitive`")
    return diags
