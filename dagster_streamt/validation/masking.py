"""``rules.security``: sensitive columns must reach exposures masked, highly sensitive ones hashed.

Needs column lineage (a parse of every model), so it runs only when a rule asks for it and the
project has no blocking error.
"""

from __future__ import annotations

from ..core.loaded import LoadedProject
from ..lineage.project_columns import column_lineage, propagate_classification
from ..spec.errors import Diagnostics


def check_masking(loaded: LoadedProject) -> Diagnostics:
    diags = Diagnostics()
    project = loaded.project
    sec = project.rules.security
    if not (sec.sensitive_columns_require_masking or sec.highly_sensitive_columns_require_encryption):
        return diags
    report = propagate_classification(loaded, column_lineage(loaded))
    for exposure, model, col in report.unmasked if sec.sensitive_columns_require_masking else []:
        file, line = project.where("model", model)
        diags.add("GOV302", f"model {model!r} passes sensitive column {col.column!r} (from "
                  f"{', '.join(col.origins)}) to exposure {exposure!r} unmasked", file=file, line=line,
                  hint=f"add `security: {{policies: [{{mask: {{column: {col.column}, method: hash}}}}]}}` to "
                       f"{model!r} or stop selecting the column")
    for exposure, model, col in report.unencrypted if sec.highly_sensitive_columns_require_encryption else []:
        file, line = project.where("model", model)
        diags.add("GOV304", f"model {model!r} passes highly sensitive column {col.column!r} (from "
                  f"{', '.join(col.origins)}) to exposure {exposure!r} without hashing or tokenizing it",
                  file=file, line=line, hint=f"mask {col.column!r} with `method: hash` or `tokenize` in {model!r}")
    return diags
