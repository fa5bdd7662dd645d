"""Diagnostics: every problem in a project is collected, located (file:line) and explained.

Codes are stable so users can grep for them and CI can match on them; never renumber.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


# code -> short title. Stable: add new codes, never reuse or renumber.
CODES: dict[str, str] = {
    "STR001": "YAML syntax error",
    "STR002": "file content has the wrong shape",
    "STR003": "project root file missing",
    "STR004": "file cannot be read",
    "STR010": "unknown key",
    "STR011": "missing required key",
    "STR012": "invalid value",
    "STR013": "duplicate key in a YAML mapping",
    "STR020": "duplicate name",
    "STR021": "name clash between a source and a model",
    "STR022": "two names become the same identifier",
    "STR030": "missing environment variable",
    "STR031": "unknown project variable",
    "STR040": "invalid materialization",
    "STR041": "legacy streamt materialization mapped to a Spark one",
    "STR042": "streamt key kept for compatibility, no effect on Spark",
    "STR043": "materialization inferred from the SQL",
    "STR044": "deprecated model version past its sunset date",
    "STR045": "watermark defaulted on a window's time column",
    "STR046": "model cannot run in Spark's Real-time Mode",
    "STR050": "invalid cron expression",
    "STR051": "invalid regular expression",
    "STR060": "partition variables in an unpartitioned model",
    "STR070": "source freshness cannot be measured",
    "STR080": "sink appends every run's snapshot (history)",
    "STR081": "sink mode does not fit its input or format",
    "STR082": "sink writer needs a Spark package",
    "STR083": "Kafka Connect settings with no effect on Spark",
    "STR084": "local mode: a connector sink writes local files instead",
    "STR085": "a file export to an object store: readers open its manifest",
    "STR090": "a table's plain file format: stored as Delta",
    "STR091": "a warehouse or checkpoints location Spark runs cannot use",
    "REF001": "reference to an unknown model",
    "REF002": "reference to an unknown source",
    "REF003": "test targets an unknown model or source",
    "REF004": "exposure references an unknown node",
    "REF005": "sink `from` names an unknown model",
    "REF006": "dependency cycle",
    "REF007": "model reads nothing",
    "REF008": "schedule selects nothing",
    "SQL001": "SQL syntax error",
    "SQL002": "template error in SQL",
    "SQL003": "SQL parsed by Spark fallback only",
    "SQL004": "model has no SQL",
    "SQL005": "SQL construct with no Spark equivalent",
    "SQL006": "Flink construct runs with a different meaning on Spark",
    "GOV101": "model has no description",
    "GOV102": "model has no owner",
    "GOV103": "model has no tests",
    "GOV104": "model name breaks the naming pattern",
    "GOV105": "model has too many dependencies",
    "GOV106": "materialization not allowed",
    "GOV107": "model description too short",
    "GOV108": "model has too few tests",
    "GOV109": "model SQL too long",
    "GOV110": "model lacks a required tag",
    "GOV111": "model tag not allowed",
    "GOV201": "source has no columns",
    "GOV202": "source has no description",
    "GOV203": "source has no owner",
    "GOV204": "source has no freshness",
    "GOV205": "source has no schema",
    "GOV206": "source freshness warning window above the maximum",
    "GOV207": "source freshness error window above the maximum",
    "GOV301": "column has no classification",
    "GOV302": "sensitive column reaches an exposure unmasked",
    "GOV303": "classification not allowed",
    "GOV304": "highly sensitive column reaches an exposure without hashing or tokenizing",
    "GOV305": "column named like personal data is not classified sensitive",
    "GOV306": "model has no access level",
    "GOV401": "topic has too few partitions",
    "GOV402": "topic has too many partitions",
    "GOV403": "topic replication factor too low",
    "GOV404": "topic replication factor too high",
    "GOV405": "topic name breaks the naming pattern",
    "GOV406": "topic name uses a forbidden prefix or suffix",
    "GOV407": "topic lacks required config",
    "GOV501": "exposure has no description",
    "GOV502": "exposure has no owner",
    "GOV503": "exposure has no SLA",
    "GOV504": "exposure has no contacts",
    "GOV505": "exposure availability below the minimum",
    "GOV506": "exposure p99 latency above the maximum",
    "GOV601": "model has no schema test",
    "GOV602": "test has too few assertions",
    "GOV603": "critical stream model has no continuous test",
}


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One located problem. Ordered by file, line, code so output is stable."""

    file: str
    line: int
    code: str
    message: str
    hint: str = ""
    severity: Severity = field(default=Severity.ERROR, compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def is_governance(self) -> bool:
        """A governance finding (``rules:``): fails ``streamt validate`` but does not stop compile, lineage,
        Dagster definitions or runs, which still work on a project that breaks its own policies."""
        return self.code.startswith("GOV")

    @property
    def blocks(self) -> bool:
        return self.is_error and not self.is_governance

    def format(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = f"{where}: {self.severity.value} {self.code}: {self.message}"
        if self.hint:
            text += f"\n    fix: {self.hint}"
        return text

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "severity": self.severity.value}


class Diagnostics:
    """Accumulates diagnostics; loading never stops at the first problem."""

    def __init__(self) -> None:
        self._items: dict[Diagnostic, None] = {}  # an ordered set: a repeated diagnostic is kept once

    def add(self, code: str, message: str, *, file: str = "", line: int = 0, hint: str = "",
            severity: Severity = Severity.ERROR) -> None:
        assert code in CODES, code
        self.extend([Diagnostic(file=file, line=line, code=code, message=message, hint=hint, severity=severity)])

    def extend(self, other: Diagnostics | list[Diagnostic]) -> None:
        self._items.update(dict.fromkeys(other.items if isinstance(other, Diagnostics) else other))

    @property
    def items(self) -> list[Diagnostic]:
        return sorted(self._items)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity is Severity.WARNING]

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self._items)

    def __len__(self) -> int:
        return len(self._items)


class ProjectError(Exception):
    """Raised when a project cannot be used; carries every diagnostic, not just the first.

    Args:
        diagnostics: Every diagnostic of the load; the message lists the blocking ones with ``file:line``.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from dagster_streamt import ProjectError, build_definitions
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "stream_project.yml").write_text("{project: {name: t}, modelz: []}")
        >>> try:
        ...     build_definitions(folder)
        ... except ProjectError as exc:
        ...     print(exc.diagnostics[0].code, exc.diagnostics[0].line)
        STR010 1
    """

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.blocks] or [d for d in diagnostics if d.is_error]
        super().__init__(
            f"{len(errors)} error(s) in project:\n" + "\n".join(d.format() for d in errors[:50])
        )
