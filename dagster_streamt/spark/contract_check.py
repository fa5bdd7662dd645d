"""An enforced model contract (streamt's ``contract: {enforced: true, columns}``), checked against
the output schema of a run: a column the contract declares and the output lacks, one the output has
and the contract does not declare, or a type that differs, fails the model with the contract's
``file:line``. It runs on the schema the run produced (one hook in ``runner._run_one``), before the
model's topic is published; the models downstream are then skipped, as after any failed model.

Types are compared the way schema tests compare them (:func:`type_matches`), after Flink's names
are mapped (``STRING`` -> ``string``, ``TIMESTAMP(3)`` -> ``timestamp``). ``nullable: false`` is a
statement about the data, not the schema Spark infers: a ``not_null`` test checks it.
"""

from __future__ import annotations

from ..spec.project import Project
from ..spec.schema_types import spark_type
from ..sql.spark_types import type_matches


def contract_violation(project: Project, name: str, schema: list[tuple[str, str]]) -> str | None:
    """The error of model ``name`` whose output has ``schema`` ((column, Spark type) pairs), or None."""
    model = project.models.get(name)
    contract = model.contract if model is not None else None
    if contract is None or not contract.enforced or not schema:
        return None
    loc = project.locations.get(("model", name))
    where = f"{loc.file}:{loc.line_of('contract')}" if loc else "its YAML"
    actual = {col.lower(): (col, typ) for col, typ in schema}
    declared = {c.name.lower() for c in contract.columns}
    problems: list[str] = []
    for i, column in enumerate(contract.columns):
        at = f"{loc.file}:{loc.line_of('contract', 'columns', i)}" if loc else where
        found = actual.get(column.name.lower())
        if found is None:
            problems.append(f"column {column.name!r} ({at}) is missing from the output")
        elif column.declared_type and not type_matches(spark_type(column.declared_type), found[1]):
            problems.append(f"column {column.name!r} is {found[1]}, the contract ({at}) says {column.declared_type}")
    extra = sorted(col for key, (col, _) in actual.items() if key not in declared)
    if extra:
        problems.append(f"column{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} "
                        "not declared in the contract")
    if not problems:
        return None
    return (f"model {name} breaks its enforced contract ({where}): {'; '.join(problems)}. Fix the SQL, or "
            "update `contract.columns` if the change is intended")


__all__ = ["contract_violation"]
