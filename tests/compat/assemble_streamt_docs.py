"""Rebuild the ``docs_*`` streamt projects from a checkout of github.com/conduktor/streamt.

Pages of streamt's documentation walk the reader through a whole project, one file per
```yaml title="path"``` block (guides name the file in the sentence before the block: "Create
`models/x.yml`:"). This script turns each page into a project folder: every such yaml block becomes
the file at that path, byte for byte (the block's lines, newline-terminated).

    python tests/compat/assemble_streamt_docs.py /tmp/streamt [OUT_DIR]

OUT_DIR defaults to ``tests/compat/streamt_projects``. Only the folders in ``PAGES`` are rewritten.
A path that appears twice in one page is an error unless ``DUPLICATE_POLICY`` says what a reader
would end up with (none of the five pages needs an entry at commit 0cd7a3b).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

PAGES: dict[str, str] = {
    "docs_ecommerce": "docs/examples/ecommerce.md",
    "docs_iot": "docs/examples/iot.md",
    "docs_payments": "docs/examples/payments.md",
    "docs_quickstart": "docs/getting-started/quickstart.md",
    "docs_first_pipeline": "docs/getting-started/first-pipeline.md",
    # guides name each file in the sentence before its block: "Create `models/orders_clean.yml`:"
    "guide_windowed": "docs/guides/windowed-aggregations.md",
    "guide_joins": "docs/guides/stream-joins.md",
    "guide_cdc": "docs/guides/cdc-pipelines.md",
}

# (page, path) -> "replace" (the later block wins) or "append" (blocks are concatenated).
DUPLICATE_POLICY: dict[tuple[str, str], str] = {}

# docs/examples/ecommerce.md has no stream_project.yml block, so the page alone is not a project.
# This file is written by us (dagster-streamt), not taken from streamt: the project name follows the
# page title ("E-commerce Events"), the description its front matter, and runtime.flink is present
# because the page's models rely on Flink (JOIN / TUMBLE, "auto-inferred as 'flink'"). The Flink
# URLs are the local ones from docs/getting-started/quickstart.md. The page mentions no Schema
# Registry, no Connect and no sink model, so neither is configured.
HANDWRITTEN: dict[str, dict[str, str]] = {
    "docs_ecommerce": {
        "stream_project.yml": """\
# Written by dagster-streamt, not part of streamt's docs: docs/examples/ecommerce.md
# shows no stream_project.yml (see NOTICE.md).
project:
  name: ecommerce-events
  version: "1.0.0"
  description: User behavior tracking and real-time personalization

runtime:
  kafka:
    bootstrap_servers: localhost:9092
  flink:
    default: local
    clusters:
      local:
        type: rest
        rest_url: http://localhost:8082
        sql_gateway_url: http://localhost:8084
""",
    },
}

FENCE_OPEN = re.compile(r'^(?P<indent>[ \t]*)```ya?ml\b[^\n]*?\btitle="(?P<title>[^"]+)"')
FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$")
UNTITLED_OPEN = re.compile(r"^(?P<indent>[ \t]*)```ya?ml[ \t]*$")
CREATE = re.compile(r"Create `(?P<path>[\w./-]+\.ya?ml)`:\s*$")


def titled_blocks(markdown: str) -> list[tuple[int, str, str]]:
    """Return ``(fence line, title, body)`` for every titled yaml block of a page."""
    lines = markdown.splitlines()
    found: list[tuple[int, str, str]] = []
    i = 0
    while i < len(lines):
        match = FENCE_OPEN.match(lines[i])
        title = match.group("title") if match else None
        if match is None and UNTITLED_OPEN.match(lines[i]):  # "Create `path`:" on the last text line before
            before = next((text for text in reversed(lines[:i]) if text.strip()), "")
            created = CREATE.search(before)
            match, title = (UNTITLED_OPEN.match(lines[i]), created.group("path")) if created else (None, None)
        if match is None or title is None:
            i += 1
            continue
        indent = match.group("indent")
        j = i + 1
        while j < len(lines) and not FENCE_CLOSE.match(lines[j]):
            j += 1
        body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : j]]
        found.append((i + 1, title, "".join(f"{line}\n" for line in body)))
        i = j + 1
    return found


def assemble_page(page: str, markdown: str) -> dict[str, str]:
    """Map each file path of one page to its final text."""
    files: dict[str, str] = {}
    for line, title, body in titled_blocks(markdown):
        if title not in files:
            files[title] = body
            continue
        policy = DUPLICATE_POLICY.get((page, title))
        if policy == "replace":
            files[title] = body
        elif policy == "append":
            files[title] += body
        else:
            raise SystemExit(f"{page}:{line}: {title} appears twice; add a DUPLICATE_POLICY entry")
    return files


def assemble(streamt: Path, out: Path) -> None:
    for folder, page in PAGES.items():
        files = assemble_page(page, (streamt / page).read_text(encoding="utf-8"))
        for path, text in HANDWRITTEN.get(folder, {}).items():
            if path in files:
                raise SystemExit(f"{page} now has its own {path}; drop the hand-written one")
            files[path] = text
        target = out / folder
        if target.exists():
            shutil.rmtree(target)
        for path, text in sorted(files.items()):
            dest = target / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
        print(f"{folder}: {len(files)} files from {page}")


def main(argv: list[str]) -> None:
    if len(argv) not in (2, 3):
        raise SystemExit(__doc__)
    default_out = Path(__file__).resolve().parent / "streamt_projects"
    assemble(Path(argv[1]), Path(argv[2]) if len(argv) == 3 else default_out)


if __name__ == "__main__":
    main(sys.argv)
