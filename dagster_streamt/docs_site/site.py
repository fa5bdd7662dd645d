"""Write the static docs site: ``index.html`` with the payload inlined as a JSON data block, model SQL
in ``assets/sql/<n>.js`` files of a few hundred models each (loaded by the page with a plain
``<script>`` the first time one of their models is opened), and the page's scripts, styles and
vendored libraries under ``assets/``. No ``fetch()``: it works from ``file://`` with no network as
well as from any static host.

Every file is written to a temporary name and renamed into place, ``index.html`` last, so a
browser or a server reading the folder never sees half a site.
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.cache import gc_paused
from ..core.files import atomic_write
from ..core.loaded import LoadedProject

HERE = Path(__file__).parent
STATIC, VENDOR = HERE / "static", HERE / "vendor"
MARKER = ".streamt-docs"  # a folder holding this file was written by us and may be rewritten
TEMPLATE_DATA, TEMPLATE_TITLE = "<!--STREAMT_DATA-->", "<!--STREAMT_TITLE-->"
SQL_CHUNK = 250  # models per SQL file: opening a model loads ~1/40 of a 10,000-model project's SQL
VENDOR_FILES = ("cytoscape.min.js", "cytoscape-dagre.min.js", "highlight.min.js", "highlight-github.min.css",
                "README.md", "LICENSE.cytoscape.txt", "LICENSE.cytoscape-dagre.txt", "LICENSE.dagre.txt",
                "LICENSE.graphlib.txt", "LICENSE.highlightjs.txt")


class DocsError(Exception):
    """A problem the user can fix (an output folder that is not ours); the CLI prints it."""


@dataclass(frozen=True)
class Generated:
    index: Path
    nodes: int
    models: int
    columns: int
    data_bytes: int
    with_runs: bool
    seconds: float
    runs_error: str = ""


def _check_output(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise DocsError(f"{out} is a file; give a folder for the site (default target/docs)")
    if out.is_dir() and not (out / MARKER).exists() and any(out.iterdir()):
        raise DocsError(f"{out} already holds other files; give an empty or new folder (default target/docs) "
                        "so nothing of yours is overwritten")


def data_block(value: Any) -> str:
    """JSON as the text of a ``<script>`` (a JSON block or a JS expression: JSON is valid JS): ``<``
    is escaped so no description or SQL can close the element."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def sql_chunks(sql: dict[str, Any]) -> tuple[dict[str, int], list[str]]:
    """(model -> chunk number, text of each ``assets/sql/<n>.js``), models in name order."""
    names = sorted(sql)
    chunk_of = {name: i // SQL_CHUNK for i, name in enumerate(names)}
    texts = [f"StreamtDocs.sqlChunk({n},{data_block({m: sql[m] for m in names[n * SQL_CHUNK:(n + 1) * SQL_CHUNK]})});\n"
             for n in range((len(names) + SQL_CHUNK - 1) // SQL_CHUNK)]
    return chunk_of, texts


def render_index(core: dict[str, Any]) -> str:
    template = (STATIC / "index.html").read_text(encoding="utf-8")
    title = html.escape(core["project"]["name"])
    head, sep, tail = template.partition(TEMPLATE_DATA)
    if not sep:
        raise RuntimeError("docs template lost its data marker")
    # split, not str.replace: the data is user text and must never be searched for a marker
    return "".join((head.replace(TEMPLATE_TITLE, title), data_block(core), tail))


def write_site(payload: dict[str, Any], out: Path) -> tuple[Path, int]:
    """Write the site into ``out``; returns (index.html, size of the inlined data in bytes)."""
    _check_output(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / MARKER, b"written by `streamt docs generate`; the folder is rewritten on each run\n")
    for src in sorted(STATIC.iterdir()):
        if src.is_file() and src.name != "index.html":
            atomic_write(out / "assets" / src.name, src.read_bytes())
    for name in VENDOR_FILES:
        atomic_write(out / "assets" / "vendor" / name, (VENDOR / name).read_bytes())
    chunk_of, texts = sql_chunks(payload["sql"])
    for n, text in enumerate(texts):
        atomic_write(out / "assets" / "sql" / f"{n}.js", text.encode("utf-8"))
    for stale in (out / "assets" / "sql").glob("*.js"):
        if not stale.stem.isdigit() or int(stale.stem) >= len(texts):
            stale.unlink()
    core = {k: v for k, v in payload.items() if k != "sql"}
    core["sql_chunk"] = chunk_of
    page = render_index(core)
    atomic_write(out / "index.html", page.encode("utf-8"))
    return out / "index.html", len(page.encode("utf-8"))


def generate(loaded: LoadedProject, out: Path, *, with_runs: bool = True) -> Generated:
    """Build the payload (column lineage from its cache when nothing changed) and write the site."""
    from ..lineage.project_columns import column_lineage
    from .payload import build_payload
    from .run_state import read_run_state

    start = time.perf_counter()
    _check_output(out)
    state = read_run_state(loaded) if with_runs else None
    with gc_paused():  # millions of small lists and dicts, none cyclic: the GC would rescan them over and over
        payload = build_payload(loaded, column_lineage(loaded), state)
        index, size = write_site(payload, out)
    n_cols = sum(len(m["columns"]) for m in payload["models"].values())
    return Generated(index, len(payload["nodes"]), len(payload["models"]), n_cols, size,
                     state is not None and not state.error, time.perf_counter() - start,
                     state.error if state is not None else "")
