"""Write ``streamt_doc_snippets.yml``: every ```yaml block of streamt's docs, classified.

    python tests/compat/extract_doc_snippets.py /tmp/streamt [OUT_FILE]

Reads ``docs/**/*.md`` and ``README.md`` of a github.com/conduktor/streamt checkout. An entry is
``{doc, line, title, kind, yaml}``: ``line`` is the 1-based line of the opening fence, ``yaml`` the block
without the fence's indentation. ``kind`` is ``project`` (top-level keys among PROJECT_KEYS),
``fragment`` (+ ``under``: dotted path of the node the block's top level goes into: ``models`` for a list
of models, ``models[]`` for keys of one model, ``tests[].assertions`` for assertions, ``environments/*.yml``
for multi-environment files), ``not_yaml_config``, ``invalid_on_purpose`` or ``unparseable`` (+ ``why``).
Parse errors, project files and environment files are classified automatically; everything else comes
from OVERRIDE_TABLE, written by reading the text around each block. A block needing a decision that has
none, or a stale override, stops the script. ``note`` records remarks and duplicate keys.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

PROJECT_KEYS = {"project", "runtime", "defaults", "rules", "sources", "models", "tests", "exposures"}
ENV_KEYS = {"environment", "runtime", "safety"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)(?P<rest>.*)$")
CLOSE = re.compile(r"^[ \t]*```[ \t]*$")


# Read from the text around each block: "doc | fence lines | kind[ under] | why (or note, if any)".
OVERRIDE_TABLE = """
docs/concepts/dag.md | 176 | invalid_on_purpose | '# This will fail validation' / '# Cycle!'
docs/concepts/dag.md | 267 | unparseable | ASCII lineage arrows; '# Avoid: 10+ levels deep'
docs/concepts/dag.md | 277 | unparseable | ASCII lineage arrows; '# Bad: Unclear relationships'
docs/concepts/dag.md | 301 | unparseable | shell line '$ streamt lineage --tag critical' after YAML
docs/concepts/exposures.md | 111 123 134 | fragment exposures | no 'type' (required by streamt's pydantic model)
docs/concepts/exposures.md | 199 226 248 270 292 | fragment exposures |
docs/concepts/exposures.md | 339 | fragment exposures | recommended placeholder ('Document All Consumers'); no 'type'
docs/concepts/exposures.md | 147 348 359 368 374 | fragment exposures[] |
docs/concepts/models.md | 48 70 86 114 134 370 447 | fragment models |
docs/concepts/models.md | 421 | fragment models | no sql
docs/concepts/models.md | 270 286 301 348 | fragment models[] |
docs/concepts/models.md | 327 | fragment models[] | two alternatives for 'access' (string, then mapping)
docs/concepts/models.md | 433 | fragment models[] | two alternatives ('High-volume' / 'Low-volume')
docs/concepts/models.md | 385 | invalid_on_purpose | '# Bad: Too much in one model' (after a '# Good' part)
docs/concepts/models.md | 407 | invalid_on_purpose | '# Bad' names (after '# Good' names); items have no sql
docs/concepts/overview.md | 95 | fragment models |
docs/concepts/sources.md | 107 125 146 210 318 326 336 | fragment sources[] |
docs/concepts/sources.md | 298 | invalid_on_purpose | '# Bad' item without description (after '# Good')
docs/concepts/sources.md | 310 | fragment sources | no 'topic'
docs/concepts/streaming-fundamentals.md | 47 | unparseable | an event's JSON payload with '← Event time' marker
docs/concepts/streaming-fundamentals.md | 134 | fragment sources[] | '# Coming soon in streamt'
docs/concepts/tests.md | 111 120 130 144 155 163 173 186 196 206 228 453 | fragment tests[].assertions |
docs/concepts/tests.md | 246 265 275 286 479 | fragment tests[] |
docs/concepts/tests.md | 437 | fragment tests | sketch: assertions given as bare names; no name/model
docs/concepts/tests.md | 467 | fragment tests | no 'type'
docs/concepts/tests.md | 489 | fragment tests[] | '...' placeholders inside flow mappings
docs/guides/cdc-pipelines.md | 572 | fragment sources[] |
docs/guides/gateway.md | 170 | not_yaml_config | SQL WHERE clause in a yaml fence (loads as a plain string)
docs/guides/multi-environment.md | 161 | not_yaml_config | 'Output:' of 'streamt envs show prod'
docs/guides/multi-environment.md | 270 | not_yaml_config | GitHub Actions workflow
docs/guides/multi-environment.md | 328 | fragment environments/*.yml | 'Never commit secrets to environment YAML files'
docs/guides/stream-joins.md | 400 | fragment models[] |
docs/guides/windowed-aggregations.md | 329 | fragment sources[] | 'configure allowed_lateness (coming soon)'
docs/guides/windowed-aggregations.md | 344 | fragment models | 'SELECT ...' placeholder SQL
docs/reference/cli.md | 545 | not_yaml_config | 'Output:' of 'streamt envs show prod'
docs/reference/configuration.md | 12 | project | skeleton: '...' placeholders
docs/reference/configuration.md | 152 162 172 183 | fragment runtime.flink |
docs/reference/flink-options.md | 126 158 184 212 236 | fragment models[] | doc marks it 'PLANNED - Not yet supported'
docs/reference/flink-options.md | 322 | fragment runtime.flink |
docs/reference/flink-options.md | 344 | fragment runtime.flink | doc marks it 'PLANNED - Not yet supported'
docs/reference/governance.md | 78 | fragment rules.topics | three alternatives for 'naming_pattern'
docs/reference/governance.md | 317 | project | '${VAR:-default}' is not expanded by streamt
docs/reference/governance.md | 380 | not_yaml_config | GitHub Actions step
docs/reference/materializations.md | 169 | fragment models[] | 'Workaround for IN' (Gateway SQL)
docs/reference/materializations.md | 330 | fragment models |
docs/reference/materializations.md | 440 456 473 | fragment models[] |
docs/reference/yaml-schema.md | 323 | fragment sources[] | 'Processing Time Example' in the Sources section
docs/reference/yaml-schema.md | 702 | fragment models[] | doc marks it 'PLANNED - Not yet supported'
docs/specs/multi-environment.md | 182 | fragment environments/*.yml | schema sketch: values are type names
README.md | 79 269 278 292 312 | fragment models |
"""


def _fields(kind: str, text: str) -> dict[str, str]:
    kind, _, under = kind.partition(" ")
    extra = {("note" if kind in ("fragment", "project") else "why"): text} if text else {}
    return {"kind": kind, **({"under": under} if under else {}), **extra}


OVERRIDES: dict[tuple[str, int], dict[str, str]] = {
    (doc, int(n)): _fields(kind, text)
    for doc, lines, kind, text in (
        [c.strip() for c in row.split("|", 3)] for row in OVERRIDE_TABLE.strip().splitlines()
    )
    for n in lines.split()
}


def duplicate_keys(text: str) -> list[str]:
    """Keys repeated within one mapping (PyYAML silently keeps the last one)."""
    found: list[str] = []
    stack = [yaml.compose(text, Loader=yaml.SafeLoader)]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            found += sorted({k for k in keys if keys.count(k) > 1})
            stack += [v for _, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    return found


def blocks(doc: str, text: str) -> list[dict[str, Any]]:
    """Every yaml fence of a page as ``{doc, line, title, yaml}``."""
    lines, i = text.splitlines(), 0
    out: list[dict[str, Any]] = []
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not CLOSE.match(lines[j]):
            j += 1
        if match["lang"] in ("yaml", "yml"):
            ind = match["indent"]
            body = "".join(f"{x[len(ind) :] if x.startswith(ind) else x.lstrip()}\n" for x in lines[i + 1 : j])
            title = re.search(r'title="([^"]*)"', match["rest"])
            out.append({"doc": doc, "line": i + 1, "title": title[1] if title else None, "yaml": body})
        i = j + 1
    return out


def classify(entry: dict[str, Any]) -> dict[str, Any]:
    try:
        data, duplicates = yaml.safe_load(entry["yaml"]), duplicate_keys(entry["yaml"])
    except yaml.YAMLError as exc:
        data, duplicates = None, []
        auto: dict[str, str] = _fields("unparseable", str(exc).splitlines()[0])
    else:
        keys = set(data) if isinstance(data, dict) else set()
        title = entry["title"] or ""
        if title.startswith(".github/"):
            auto = _fields("not_yaml_config", "GitHub Actions workflow")
        elif title.startswith("environments/") or (keys and keys <= ENV_KEYS and keys - {"runtime"}):
            auto = _fields("fragment environments/*.yml", "")
        elif keys and keys <= PROJECT_KEYS:
            auto = {"kind": "project"}
        else:
            auto = {}
    override = OVERRIDES.get((entry["doc"], entry["line"]), {})
    fields = {**({} if "kind" in override else auto), **override}
    if "kind" not in fields:
        raise SystemExit(f"{entry['doc']}:{entry['line']}: needs an OVERRIDE_TABLE row")
    if duplicates:
        dup = f"duplicate keys {duplicates} (PyYAML keeps the last)"
        fields["note"] = f"{fields['note']}; {dup}" if "note" in fields else dup
    order = ["doc", "line", "title", "kind", "under", "why", "note", "yaml"]
    merged = {**entry, **fields}
    return {k: merged[k] for k in order if k in merged}


class _Dumper(yaml.SafeDumper):
    """Dumps multi-line strings as literal blocks."""


_Dumper.add_representer(
    str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style="|" if "\n" in v else None)
)

HEADER = """\
# Every ```yaml block of streamt's documentation (docs/**/*.md and README.md), classified.
# Source: github.com/conduktor/streamt at commit 0cd7a3b, Apache-2.0 (see streamt_projects/LICENSE).
# Generated by tests/compat/extract_doc_snippets.py (fields: see its docstring); edit its OVERRIDE_TABLE, not this.
"""


def main(argv: list[str]) -> None:
    if len(argv) not in (2, 3):
        raise SystemExit(__doc__)
    root = Path(argv[1])
    out = Path(argv[2]) if len(argv) == 3 else Path(__file__).resolve().parent / "streamt_doc_snippets.yml"
    pages = [*sorted(root.glob("docs/**/*.md")), root / "README.md"]
    entries = [e for p in pages for e in blocks(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))]
    stale = set(OVERRIDES) - {(e["doc"], e["line"]) for e in entries}
    if stale:
        raise SystemExit(f"OVERRIDES for blocks that no longer exist: {sorted(stale)}")
    result = sorted((classify(e) for e in entries), key=lambda e: (e["doc"], e["line"]))
    body = yaml.dump(result, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000)
    out.write_text(HEADER + body, encoding="utf-8")
    print(f"{len(result)} blocks -> {out}: {dict(Counter(e['kind'] for e in result))}")


if __name__ == "__main__":
    main(sys.argv)
