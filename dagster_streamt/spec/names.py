"""Safe identifiers derived from streamt names (``payments-pipeline``, ``orders.v1``).

Spark view names and Dagster op, job, check and schedule names allow only letters, digits and
``_``. Every place that needs such a name calls :func:`safe_identifier`, and :func:`check_names`
reports two names that become the same identifier, naming both, instead of letting one silently
replace the other.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .errors import Diagnostics

if TYPE_CHECKING:
    from .project import Project

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def safe_identifier(name: str) -> str:
    """``payments-raw.v1`` -> ``payments_raw_v1``; a leading digit gets a ``_`` prefix."""
    out = _UNSAFE.sub("_", name)
    return f"_{out}" if out[:1].isdigit() else out


def check_names(project: Project) -> Diagnostics:
    """Sources and models share Spark's namespace (``ref()`` and ``source()`` become view names);
    tests become Dagster check names and exposures Dagster assets: each must stay distinct."""
    diags = Diagnostics()
    groups: list[tuple[str, list[tuple[str, str]]]] = [
        ("Spark view", [("source", n) for n in project.sources] + [("model", n) for n in project.models]),
        ("Dagster check", [("test", n) for n in project.tests]),
        ("Dagster asset", [("exposure", n) for n in project.exposures]),
    ]
    for what, entries in groups:
        seen: dict[str, tuple[str, str]] = {}
        for kind, name in sorted(entries, key=lambda e: (e[1], e[0])):
            ident = safe_identifier(name).lower() if what == "Spark view" else safe_identifier(name)
            first = seen.get(ident)
            if first is None:
                seen[ident] = (kind, name)
                continue
            file, line = project.where(kind, name)
            ffile, fline = project.where(*first)
            same = first[1] == name
            code = "STR021" if same else "STR022"
            reason = "have the same name" if same else f"both become the {what} name {safe_identifier(name)!r}"
            diags.add(code, f"{first[0]} {first[1]!r} ({ffile}:{fline}) and {kind} {name!r} {reason}",
                      file=file, line=line, hint=f"rename one of them: in {what} names `-` and `.` become `_`"
                      + (" and case is ignored" if what == "Spark view" else ""))
    return diags
