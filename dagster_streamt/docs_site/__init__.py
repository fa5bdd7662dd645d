"""``streamt docs``: a static, offline documentation site of a project (tables, columns, lineage,
PII flow, last runs), built from the same loaded project as every other command."""

from .site import DocsError, Generated, generate

__all__ = ["DocsError", "Generated", "generate"]
