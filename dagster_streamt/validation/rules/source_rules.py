"""``rules.sources``: documentation, schemas and freshness SLAs of sources."""

from __future__ import annotations

from ...core.durations import optional_seconds as _seconds
from ...core.durations import parse_duration
from .context import RuleContext


def check_sources(ctx: RuleContext) -> None:
    sr = ctx.project.rules.sources
    for name, s in ctx.project.sources.items():
        if sr.require_columns and not s.columns:
            ctx.add("GOV201", "source", name, f"source {name!r} declares no columns (rules.sources.require_columns)",
                    "add `columns: [{name: ..., type: ...}]`")
        has_schema = bool(s.schema_ and (s.schema_.subject or s.schema_.definition)) or any(c.type for c in s.columns)
        if sr.require_schema and not has_schema:
            ctx.add("GOV205", "source", name, f"source {name!r} has no schema (rules.sources.require_schema)",
                    "add `schema: {definition: ...}` (Avro or JSON Schema) or typed `columns:`")
        if sr.require_description and not (s.description or "").strip():
            ctx.add("GOV202", "source", name, f"source {name!r} has no description", "add `description: ...`")
        if sr.require_owner and not s.owner:
            ctx.add("GOV203", "source", name, f"source {name!r} has no owner", "add `owner: team-name`")
        if sr.require_freshness and s.freshness is None:
            ctx.add("GOV204", "source", name, f"source {name!r} has no freshness SLA",
                    "add `freshness: {warn_after: 1h, error_after: 6h}`")
        f = s.freshness
        if f is None:
            continue
        warn = _seconds(f.warn_after) or _seconds(f.warn_after_seconds)
        error = _seconds(f.error_after) or _seconds(f.max_lag_seconds)
        for value, limit, key, code in ((warn, sr.max_freshness_warn, "max_freshness_warn", "GOV206"),
                                        (error, sr.max_freshness_error, "max_freshness_error", "GOV207")):
            if value is not None and limit is not None and value > parse_duration(limit):
                ctx.add(code, "source", name, f"source {name!r}: freshness window {value:g}s is longer than "
                        f"rules.sources.{key}={limit}", f"tighten the source's freshness to at most {limit}",
                        "freshness")
