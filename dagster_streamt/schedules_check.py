"""Schedule and automation checks: cron expressions, time zones, selections that select nothing."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from .graph.graph import Graph
from .graph.select import SelectionError, select
from .spec.errors import Diagnostics
from .spec.project import Project


def valid_cron(expr: str) -> bool:
    """Five fields (Dagster does not take seconds) that croniter accepts."""
    return len(expr.split()) == 5 and croniter.is_valid(expr)


def check_schedules(project: Project, graph: Graph) -> Diagnostics:
    diags = Diagnostics()
    for name, s in project.schedules.items():
        file, _ = project.where("schedule", name)
        if not valid_cron(s.cron):
            diags.add("STR050", f"schedule {name!r}: invalid cron expression {s.cron!r}", file=file,
                      line=project.where("schedule", name, "cron")[1],
                      hint='use five fields: minute hour day-of-month month day-of-week, e.g. "0 * * * *"')
        try:
            ZoneInfo(s.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            diags.add("STR012", f"schedule {name!r}: unknown timezone {s.timezone!r}", file=file,
                      line=project.where("schedule", name, "timezone")[1], hint='use an IANA name like "Europe/Paris"')
        try:
            select(graph, s.select)
        except SelectionError as exc:
            diags.add("REF008", f"schedule {name!r}: {exc}", file=file,
                      line=project.where("schedule", name, "select")[1], hint="fix the selection")
    for name, m in project.models.items():
        if m.automation and m.automation.on_cron and not valid_cron(m.automation.on_cron):
            file, line = project.where("model", name, "automation", "on_cron")
            diags.add("STR050", f"model {name!r}: invalid cron expression {m.automation.on_cron!r}", file=file,
                      line=line, hint='use five fields, e.g. "0 * * * *"')
    return diags
