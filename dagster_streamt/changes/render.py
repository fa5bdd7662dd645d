"""A change set as a reviewer reads it: every change with its class and reason, what it reaches, the
order a run would refresh in, and one count per class."""

from __future__ import annotations

from ..core.ids import name_of
from .classify import CLASSES, ChangeSet


def _names(ids: tuple[str, ...], kind: str) -> list[str]:
    return [name_of(i) for i in ids if i.startswith(f"{kind}.")]


def text(changes: ChangeSet, title: str) -> str:
    """The change set as lines, one detail a line under each change; unchanged models that refresh
    nothing are counted, not listed."""
    lines = [title]
    width = max((len(f"{c.kind} {c.name}") for c in changes.changes), default=0)
    for c in changes.changes:
        if c.change == "unchanged" and c.refresh == "none":
            continue
        lines.append(f"  {f'{c.kind} {c.name}':<{width}}  {c.change:<18}  {c.reason}".rstrip())
        details = []
        if c.refresh != "none":
            details.append(f"refresh: {c.refresh}")
        if c.change in ("breaking", "state_incompatible", "destructive"):
            models = _names(c.affected, "model")
            if models:
                details.append(f"downstream: {', '.join(models)}")
            if c.columns:
                details.append(f"columns reading it: {', '.join(c.columns)}")
            if c.exposures:
                details.append(f"exposures: {', '.join(name_of(e) for e in c.exposures)}")
            if c.owners:
                details.append(f"owners: {', '.join(c.owners)}")
        lines.extend(f"      {d}" for d in details)
    lines.append(f"refresh order: {' -> '.join(changes.order)}" if changes.order else "nothing to refresh")
    lines.append(", ".join(f"{changes.counts[k]} {k}" for k in CLASSES if changes.counts.get(k)) or "no models")
    return "\n".join(lines)
