"""The loaded project: typed entities plus where each one was written (for error messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .models import Defaults, Exposure, Model, ProjectInfo, Rules, Runtime, Schedule, Source, Test
from .names import safe_identifier
from .yaml_loader import LineMap


@dataclass(frozen=True)
class EntityLocation:
    """File and YAML path of one entity; resolves sub-keys to lines."""

    file: str
    base: tuple[str | int, ...]
    linemap: LineMap

    @property
    def line(self) -> int:
        return self.linemap.line(self.base)

    def line_of(self, *sub: str | int) -> int:
        return self.linemap.line((*self.base, *sub))

    def value_line_of(self, *sub: str | int) -> int:
        path = (*self.base, *sub)
        return self.linemap.value_lines.get(path, self.linemap.line(path))


@dataclass
class Project:
    root: Path
    env: str | None
    info: ProjectInfo
    runtime: Runtime
    defaults: Defaults
    rules: Rules
    vars: dict[str, Any]
    sources: dict[str, Source]
    models: dict[str, Model]
    tests: dict[str, Test]
    exposures: dict[str, Exposure]
    schedules: dict[str, Schedule]
    locations: dict[tuple[str, str], EntityLocation] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)
    env_used: dict[str, str | None] = field(default_factory=dict)
    file_hashes: dict[str, str] = field(default_factory=dict)
    legacy_materializations: dict[str, str] = field(default_factory=dict)
    inferred: dict[str, str] = field(default_factory=dict)  # model -> why its materialization was inferred
    event_columns: dict[str, str] = field(default_factory=dict)  # model -> event-time column (own or inherited)
    # what is worked out from each model's SQL once, never again: ("render" | "features", model) -> (the
    # SQL template it came from, the value); see compile.render.render_once and compile.modes
    derived: dict[tuple[str, str], tuple[str, Any]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def ident(self) -> str:
        """The project name as a Dagster op/job/sensor name part (``payments-pipeline`` -> ``payments_pipeline``)."""
        return safe_identifier(self.info.name)

    def location(self, kind: str, name: str) -> EntityLocation | None:
        return self.locations.get((kind, name))

    def where(self, kind: str, name: str, *sub: str | int) -> tuple[str, int]:
        """(file, line) of an entity or one of its keys; ('', 0) when unknown."""
        loc = self.locations.get((kind, name))
        return ("", 0) if loc is None else (loc.file, loc.line_of(*sub))

    def resolve_path(self, value: str) -> Path:
        """Project paths are relative to the project directory, never to the current directory."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else (self.root / p)
