"""Schedule and automation checks: cron expressions, time zones, selections that select nothing."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from ..graph.graph import Graph
from ..graph.select import SelectionError, select
from ..spec.errors import Diagnostics, Severity
from ..spec.project import Project


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
    diags.extend(check_source_freshness(project))
    return diags


def check_source_freshness(project: Project) -> Diagnostics:
    """Freshness checks and their schedule get fixed names: report clashes at load time (Dagster would
    refuse the code location), and SLAs that nothing can measure (they would never be checked)."""
    from ..checks.source_freshness import check_name, measured_by, windows

    diags = Diagnostics()
    schedule = f"{project.ident}_source_freshness"
    if schedule in project.schedules:
        file, line = project.where("schedule", schedule)
        diags.add("STR020", f"schedule name {schedule!r} is taken by the source freshness schedule", file=file,
                  line=line, hint="rename this schedule")
    for name, s in project.sources.items():
        if windows(s.freshness) is None:
            continue
        file, line = project.where("source", name, "freshness")
        if measured_by(s) is None:
            diags.add("STR070", f"source {name!r}: freshness cannot be measured for a {s.resolved_format} source "
                                "without a timestamp column, so it is never checked", file=file, line=line,
                      severity=Severity.WARNING,
                      hint="add `freshness: {column: <timestamp column>}` (or `event_time: {column: ...}`)")
        clash = project.tests.get(check_name(s))
        if clash is not None and clash.source == name:
            tfile, tline = project.where("test", clash.name)
            diags.add("STR020", f"test {clash.name!r} has the name of the freshness check of source {name!r}",
                      file=tfile, line=tline, hint="rename the test")
    return diags
