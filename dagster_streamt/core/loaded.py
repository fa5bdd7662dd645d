"""A project after load, compile, graph and validation: what every command and layer works from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # plain data classes; importing them here would make the core depend on every layer
    from ..compile.compiled import CompiledProject
    from ..graph.graph import Graph
    from ..spec.errors import Diagnostic
    from ..spec.project import Project


@dataclass
class LoadedProject:
    project: Project
    compiled: CompiledProject
    graph: Graph
    diagnostics: list[Diagnostic]
    from_cache: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        """Errors that make the project unusable (governance findings are not among them)."""
        return [d for d in self.diagnostics if d.blocks]

    @property
    def findings(self) -> list[Diagnostic]:
        """Governance findings: ``streamt validate`` fails on them, everything else still works."""
        return [d for d in self.diagnostics if d.is_error and d.is_governance]
