"""streamt's column shorthand (``columns: [{name: id, tests: [not_null, {range: {min: 0}}]}]``) as
ordinary tests: one test per column, named ``<node>__<column>``, holding that column's assertions."""

from __future__ import annotations

from typing import Any

from .project import EntityLocation

# the parameter that names the column, for assertions that do not take `column:`
_COLUMN_PARAM = {"not_null": "columns", "unique": "columns", "unique_key": "key"}


def _assertion(entry: Any, column: str) -> dict[str, Any]:
    """``not_null`` -> ``{not_null: {columns: [col]}}``; ``{range: {min: 0}}`` -> ``{range: {column: col, min: 0}}``."""
    if isinstance(entry, str):
        name, params = entry, {}
    else:
        (name, params), = entry.items()
        params = dict(params or {})
    param = _COLUMN_PARAM.get(name, "column")
    params.setdefault(param, [column] if param == "columns" else column)
    return {name: params}


def column_tests(typed: dict[str, dict[str, Any]], locations: dict[tuple[str, str], EntityLocation]
                 ) -> list[tuple[dict[str, Any], EntityLocation]]:
    """Raw test entries (validated like any test) for the columns of the loaded sources and models
    (``typed``: section -> name -> object) that carry ``tests:``."""
    out: list[tuple[dict[str, Any], EntityLocation]] = []
    for section, kind in (("sources", "source"), ("models", "model")):
        for node in typed[section].values():
            loc = locations[(kind, node.name)]
            for i, col in enumerate(node.columns):
                if not col.tests:
                    continue
                bad = [e for e in col.tests if not (isinstance(e, str) or (isinstance(e, dict) and len(e) == 1))]
                raw: dict[str, Any] = {
                    "name": f"{node.name}__{col.name}",
                    kind: node.name,
                    "type": "sample",
                    "description": f"column tests of {kind} {node.name}.{col.name}",
                    "assertions": [e if e in bad else _assertion(e, col.name) for e in col.tests],
                    "column": col.name,
                }
                out.append((raw, EntityLocation(loc.file, (*loc.base, "columns", i, "tests"), loc.linemap)))
    return out
