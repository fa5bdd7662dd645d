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
    """A project after load, compile, graph and validation, as ``load`` returns it.

    Attributes:
        project: The project's YAML as typed, frozen objects (``sources``, ``models``, ``tests``,
            ``exposures``, ``schedules`` by name; ``runtime``, ``rules``, ``vars``).
        compiled: The compiled models (rendered SQL, Spark SQL, output columns, inputs).
        graph: The typed DAG of sources, models, tests and exposures.
        diagnostics: Every error, warning and note with ``file:line``.
        from_cache: True when the project came from the cache in ``target/``.

    Examples:
        >>> from dagster_streamt import load
        >>> loaded = load("project")
        >>> loaded.project.models["orders_clean"].materialized
        'stream'
        >>> sorted(loaded.compiled.models)[:2]
        ['customer_orders', 'daily_revenue']
    """

    project: Project
    compiled: CompiledProject
    graph: Graph
    diagnostics: list[Diagnostic]
    from_cache: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        """Errors that make the project unusable (governance findings are not among them).

        Returns:
            The blocking diagnostics; empty for a usable project.

        Examples:
            >>> from dagster_streamt import load
            >>> load("project").errors
            []
        """
        return [d for d in self.diagnostics if d.blocks]

    @property
    def findings(self) -> list[Diagnostic]:
        """Governance findings (``GOV...``): ``streamt validate`` fails on them, everything else still works.

        Returns:
            The governance errors.

        Examples:
            >>> from dagster_streamt import load
            >>> load("project").findings
            []
        """
        return [d for d in self.diagnostics if d.is_error and d.is_governance]
