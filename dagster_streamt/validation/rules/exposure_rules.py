"""``rules.exposures``: ownership, documentation, contacts and SLA bounds of exposures."""

from __future__ import annotations

from .context import RuleContext


def check_exposures(ctx: RuleContext) -> None:
    er = ctx.project.rules.exposures
    for name, e in ctx.project.exposures.items():
        if er.require_description and not (e.description or "").strip():
            ctx.add("GOV501", "exposure", name, f"exposure {name!r} has no description", "add `description: ...`")
        if er.require_owner and not e.owner:
            ctx.add("GOV502", "exposure", name, f"exposure {name!r} has no owner", "add `owner: team-name`")
        if er.require_sla and e.sla is None:
            ctx.add("GOV503", "exposure", name, f"exposure {name!r} has no SLA",
                    "add `sla: {availability: \"99.9%\", latency_p99_ms: ...}`")
        if er.require_contacts and not e.contacts:
            ctx.add("GOV504", "exposure", name, f"exposure {name!r} has no contacts",
                    "add `contacts: [{name: ..., email: ...}]`")
        if e.sla is None:
            continue
        availability = e.sla.availability_percent
        if er.min_availability is not None and availability is not None and availability < er.min_availability:
            ctx.add("GOV505", "exposure", name, f"exposure {name!r}: SLA availability {availability:g}% is below "
                    f"rules.exposures.min_availability={er.min_availability:g}", "raise the availability target",
                    "sla", "availability")
        p99 = e.sla.latency_p99_ms
        if er.max_latency_p99_ms is not None and p99 is not None and p99 > er.max_latency_p99_ms:
            ctx.add("GOV506", "exposure", name, f"exposure {name!r}: SLA latency_p99_ms {p99:g} is above "
                    f"rules.exposures.max_latency_p99_ms={er.max_latency_p99_ms}", "tighten the latency target",
                    "sla", "latency_p99_ms")
