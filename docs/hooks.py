"""MkDocs hook: pages' ``<!-- generated:NAME -->`` markers become Markdown generated from the code
(``dagster_streamt.guide``): the streamt key table, the CLI and YAML references."""

from __future__ import annotations

from typing import Any

from dagster_streamt.guide import expand


def on_page_markdown(markdown: str, **_: Any) -> str:
    return expand(markdown)
