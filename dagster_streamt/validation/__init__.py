"""Every check a project gets after it loads, compiles and graphs: one registry of passes.

A pass takes the :class:`LoadedProject` and returns :class:`Diagnostics`; :func:`validate` runs
them in order, adding each pass's findings before the next runs (so a pass can see whether the
project is usable so far). To add a validation, write a module here with one function and list it
in :data:`PASSES`::

    # dagster_streamt/validation/owners.py
    def check_owners(loaded: LoadedProject) -> Diagnostics:
        diags = Diagnostics()
        for name, m in loaded.project.models.items():
            if m.owner and "@" in m.owner:
                file, line = loaded.project.where("model", name, "owner")
                diags.add("GOV101", f"model {name!r}: owner is an e-mail", file=file, line=line,
                          hint="name a team")
        return diags

    PASSES = (..., ValidationPass("owners", check_owners))

Codes are registered in :mod:`dagster_streamt.spec.errors` (stable, never renumbered).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.loaded import LoadedProject
from ..spec.errors import Diagnostics
from .data_tests import check_tests
from .realtime import check_real_time
from .rules import check_rules
from .schedules import check_schedules
from .sinks import check_sinks
from .storage import check_storage


@dataclass(frozen=True)
class ValidationPass:
    name: str
    run: Callable[[LoadedProject], Diagnostics]
    needs_valid: bool = False  # skipped when the project already has a blocking error (needs column lineage)


def _data_tests(loaded: LoadedProject) -> Diagnostics:
    """``accepted_types`` on a model without declared types needs types carried through SELECT lists."""
    inferred = None
    tests = loaded.project.tests.values()
    if not loaded.errors and any("accepted_types" in a for t in tests for a in t.assertions):
        from ..lineage.project_columns import column_lineage, inferred_types  # sqlglot walk: only when asked

        inferred = inferred_types(loaded, column_lineage(loaded))
    return check_tests(loaded.project, loaded.compiled, loaded.graph, inferred)


def _masking(loaded: LoadedProject) -> Diagnostics:
    from .masking import check_masking  # column lineage: only for projects whose rules ask for it

    return check_masking(loaded)


PASSES: tuple[ValidationPass, ...] = (
    ValidationPass("rules", lambda loaded: check_rules(loaded.project, loaded.graph)),
    ValidationPass("schedules", lambda loaded: check_schedules(loaded.project, loaded.graph)),
    ValidationPass("sinks", lambda loaded: check_sinks(loaded.project, loaded.graph)),
    ValidationPass("storage", lambda loaded: check_storage(loaded.project)),
    ValidationPass("real_time", lambda loaded: check_real_time(loaded.project, loaded.graph)),
    ValidationPass("data_tests", _data_tests),
    ValidationPass("masking", _masking, needs_valid=True),
)


def validate(loaded: LoadedProject, diags: Diagnostics) -> None:
    """Run every pass over ``loaded``, adding findings to ``diags`` and ``loaded.diagnostics``."""
    for p in PASSES:
        if p.needs_valid and loaded.errors:
            continue
        diags.extend(p.run(loaded))
        loaded.diagnostics = diags.items


__all__ = ["PASSES", "ValidationPass", "validate"]
