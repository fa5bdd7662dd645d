"""Turn a YAML block of streamt's documentation into a project folder that can be loaded.

A block is a whole file (``kind: project``) or a fragment that lives at a known place (``under:``,
decided by reading the text around it, see extract_doc_snippets.py). Fragments get the smallest
context that makes them an entity: a name where the block has none, a topic for a source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

SNIPPETS = Path(__file__).parent / "streamt_doc_snippets.yml"
# keys whose schema problems we check: a documented key must never be unknown, missing or mis-shaped
SCHEMA_CODES = frozenset({"STR002", "STR010", "STR011", "STR012", "STR013", "STR040", "TST001", "TST002",
                          "TST003", "TST004"})


def load_snippets() -> list[dict[str, Any]]:
    return list(yaml.safe_load(SNIPPETS.read_text(encoding="utf-8")))


def _named(entry: Any, kind: str, i: int) -> Any:
    if not isinstance(entry, dict):
        return entry
    out = dict(entry)
    out.setdefault("name", f"snippet_{kind}_{i}")
    if kind == "sources" and not ({"topic", "path", "table", "format"} & out.keys()):
        out["topic"] = "snippet.topic"
    if kind == "tests" and not ({"model", "source"} & out.keys()):
        out["model"] = "snippet_model"
    if kind == "tests":
        out.setdefault("assertions", [{"not_null": {"columns": ["id"]}}])
    return out


def _wrap(under: str, data: Any) -> dict[str, Any]:
    """Place a fragment where the docs say it lives."""
    section = under.split("[", 1)[0].split(".", 1)[0]
    if under in ("models[]", "sources[]", "tests[]", "exposures[]"):
        items = data if isinstance(data, list) else [data]
        return {section: [_named(x, section, i) for i, x in enumerate(items)]}
    if under in ("models", "sources", "tests", "exposures"):
        items = data.get(section, data) if isinstance(data, dict) else data
        items = items if isinstance(items, list) else [items]
        return {section: [_named(x, section, i) for i, x in enumerate(items)]}
    if under == "tests[].assertions":
        assertions = data if isinstance(data, list) else [data]
        return {"tests": [{"name": "snippet_test", "model": "snippet_model", "assertions": assertions}]}
    parts = under.split(".")
    node: Any = data
    for part in reversed(parts):
        node = {part: node}
    return node


def project_files(snippet: dict[str, Any]) -> tuple[dict[str, str], str | None]:
    """(files, environment to load) for one snippet."""
    data = yaml.safe_load(snippet["yaml"])
    under = snippet.get("under")
    if under == "environments/*.yml":  # loaded under the name the file declares, as streamt requires
        header = data.get("environment") if isinstance(data, dict) else None
        env = str(header.get("name")) if isinstance(header, dict) and header.get("name") else "snippet"
        return {"stream_project.yml": "project: {name: snippet}\n", f"environments/{env}.yml": snippet["yaml"]}, env
    doc = data if under is None else _wrap(under, data)
    if not isinstance(doc, dict):
        doc = {}
    for section in ("sources", "models", "tests", "exposures"):
        if isinstance(doc.get(section), list):
            doc[section] = [_named(x, section, i) for i, x in enumerate(doc[section])]
    doc.setdefault("project", {"name": "snippet"})
    return {"stream_project.yml": yaml.safe_dump(doc, sort_keys=False)}, None
