"""Storage checks for ``streamt validate``: what ``advanced.spark.format`` means now.

Tables and stream outputs are Delta tables: one commit per refresh (readers never see half a
version), time travel, ``MERGE``, and readable by any engine that reads Delta. Older releases also
stored them as plain Parquet/ORC/JSON/CSV versions; that setting is still accepted, with a note
saying where plain files come from now: a file export, which keeps its folder one complete version.
"""

from __future__ import annotations

from ..core.object_stores import is_object_uri
from ..spec.errors import Diagnostics, Severity
from ..spec.project import Project


def check_storage(project: Project) -> Diagnostics:
    diags = Diagnostics()
    spark = project.runtime.spark
    for key, value in (("warehouse", spark.warehouse), ("checkpoints", spark.checkpoints)):
        if "://" in value and not is_object_uri(value):
            diags.add("STR091", f"runtime.spark.{key} {value!r}: a local or mounted folder, or an object store "
                      "(s3a://, gs://, abfss://)",
                      hint="mount that filesystem and give its path, or use an object store URI")
    for name, m in sorted(project.models.items()):
        fmt = m.advanced.spark.format
        if m.materialized in ("view", "sink") or fmt.lower() == "delta":
            continue
        file, line = project.where("model", name, "advanced", "spark", "format")
        diags.add("STR090", f"model {name!r}: advanced.spark.format {fmt!r}: tables and stream outputs are stored "
                  "as Delta Lake tables (Parquet data files and a transaction log), whatever this says",
                  file=file, line=line, severity=Severity.NOTE,
                  hint=f"remove the key; for plain {fmt} files add an export: a model with `from: {name}` and "
                  f"`sink: {{format: {fmt}, path: ...}}`")
    return diags
