"""``rules.security``: classification of columns, allowed levels, PII name patterns and access levels.

Masking of sensitive data (GOV302/GOV304) needs column lineage and is checked after it, in
:func:`dagster_streamt.lineage.project_columns.check_masking`.
"""

from __future__ import annotations

import re

from .context import RuleContext

SENSITIVE_LEVELS = ("sensitive", "highly_sensitive", "pii")


def check_security(ctx: RuleContext) -> None:
    sec = ctx.project.rules.security
    patterns = [re.compile(p, re.I) for p in sec.pii_column_patterns]
    allowed = set(sec.allowed_classifications) if sec.allowed_classifications is not None else None
    nodes = [("source", n, s.columns) for n, s in ctx.project.sources.items()]
    nodes += [("model", n, m.columns) for n, m in ctx.project.models.items() if m.enabled]
    for kind, name, columns in nodes:
        for i, c in enumerate(columns):
            if kind == "source" and sec.require_classification and not c.classification:
                ctx.add("GOV301", kind, name, f"{kind} {name!r} column {c.name!r} has no classification",
                        "add `classification: public|internal|confidential|sensitive|highly_sensitive`", "columns", i)
            if allowed is not None and c.classification and c.classification not in allowed:
                ctx.add("GOV303", kind, name, f"{kind} {name!r} column {c.name!r} is classified "
                        f"{c.classification!r}, not one of rules.security.allowed_classifications",
                        f"use one of: {', '.join(sorted(allowed))}", "columns", i)
            if any(p.search(c.name) for p in patterns) and c.classification not in SENSITIVE_LEVELS:
                ctx.add("GOV305", kind, name, f"{kind} {name!r} column {c.name!r} looks like personal data "
                        "(rules.security.pii_column_patterns) but is not classified sensitive",
                        "add `classification: sensitive` (or highly_sensitive)", "columns", i)
    if sec.require_access_level:
        for name, m in ctx.project.models.items():
            if m.enabled and m.access_level is None:
                ctx.add("GOV306", "model", name, f"model {name!r} has no access level "
                        "(rules.security.require_access_level)", "add `access: private|protected|public`")
