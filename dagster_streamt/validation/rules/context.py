"""What every rule family needs: the project, its graph, and a place to put findings at file:line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...graph.graph import Graph
from ...spec.errors import Diagnostics, Severity
from ...spec.project import Project


@dataclass
class RuleContext:
    project: Project
    graph: Graph
    diags: Diagnostics

    def add(self, code: str, kind: str, name: str, message: str, hint: str, *sub: str | int,
            severity: Severity = Severity.ERROR) -> None:
        file, line = self.project.where(kind, name, *sub)
        self.diags.add(code, message, file=file, line=line, hint=hint, severity=severity)

    def regex(self, pattern: str | None, key: str) -> re.Pattern[str] | None:
        """A rule's pattern compiled, or None (an invalid one is reported once, at the rules block)."""
        if not pattern:
            return None
        try:
            return re.compile(pattern)
        except re.error as exc:
            self.diags.add("STR051", f"{key} is not a valid regular expression: {exc}", file="stream_project.yml",
                           line=0, hint="fix the pattern (Python re syntax)")
            return None

    def tested(self) -> dict[str, list[str]]:
        """model -> names of the enabled tests on it."""
        out: dict[str, list[str]] = {}
        for t in self.project.tests.values():
            if t.enabled and t.model:
                out.setdefault(t.model, []).append(t.name)
        return out
