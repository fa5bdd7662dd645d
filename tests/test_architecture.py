"""The package's shape, checked from its own source: layering, no import cycles, one SQL front end,
small modules, public Dagster API only. These rules are what keep a feature to one place."""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from .changed import runtime_imports

PACKAGE = Path(__file__).resolve().parents[1] / "dagster_streamt"
MAX_LINES = 500
SQLGLOT_PARSERS = {"parse", "parse_one", "transpile", "tokenize", "Tokenizer", "Parser", "Dialect"}

# room -> rooms (top-level subpackages or modules of dagster_streamt) it must not import, even lazily
FORBIDDEN = {
    "core": {"api", "spec", "compile", "graph", "sql", "lineage", "checks", "validation", "spark", "dagster", "cli",
             "openlineage", "docs_site", "manifest"},
    "spec": {"api", "compile", "graph", "sql", "lineage", "checks", "validation", "spark", "dagster", "cli",
             "openlineage", "docs_site"},
    "sql": {"api", "compile", "graph", "lineage", "checks", "validation", "spark", "dagster", "cli", "openlineage",
            "docs_site"},
    "graph": {"api", "lineage", "checks", "validation", "spark", "dagster", "cli", "openlineage", "docs_site"},
    "compile": {"api", "graph", "lineage", "checks", "validation", "spark", "dagster", "cli", "openlineage",
                "docs_site"},
    "lineage": {"api", "spark", "dagster", "cli", "docs_site", "openlineage"},  # events are built from lineage
    "validation": {"api", "spark", "dagster", "cli", "docs_site"},
    "changes": {"api", "spark", "dagster", "cli", "docs_site", "openlineage", "checks"},
    "spark": {"api", "dagster", "cli", "docs_site", "validation", "checks"},  # checks run on Spark, not in it
    "openlineage": {"dagster", "cli", "docs_site"},
    "dagster": {"cli"},
    "jars": {"api", "spec", "compile", "graph", "sql", "lineage", "checks", "validation", "spark", "dagster", "cli",
             "openlineage", "docs_site", "kafka"},
}
# dagster_streamt.spark by concept, lowest first: a module imports only its own layer and the layers
# before it, so adding a sink, a source format or a refresh strategy touches one subpackage
SPARK_LAYERS: tuple[tuple[str, ...], ...] = (
    ("conditions", "errors"),  # what went wrong, in one line
    ("storage",),  # where tables, checkpoints and run state live
    ("session",),  # starting and reaching a Spark engine
    ("run",),  # what one run carries through its models
    ("delta",),  # Delta Lake mechanics
    ("sources",),  # reading a model's inputs
    ("tables",),  # batch materializations
    ("streams",),  # Structured Streaming models
    ("sinks",),  # publishing outside the warehouse
    ("contract_check", "up_to_date", "new_data", "runner", "server_warmup"),  # running a selection of models
)
# third-party engines a room must not import (the lineage CLI and validation stay fast without them)
NO_ENGINES = {
    "core": {"pyspark", "dagster", "sqlglot", "pydantic"},
    "spec": {"pyspark", "dagster", "sqlglot"},
    "graph": {"pyspark", "dagster", "sqlglot"},
    "lineage": {"pyspark", "dagster"},
    "validation": {"pyspark", "dagster"},
    "compile": {"pyspark", "dagster"},
    "sql": {"pyspark", "dagster"},
    "spark": {"dagster"},
    "changes": {"pyspark", "dagster"},
    "jars": {"dagster", "sqlglot", "pydantic"},  # pyspark only to resolve, lazily: a cached set needs no import
}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


@cache
def _imports() -> dict[str, set[str]]:
    """module -> every dotted name it imports at run time (function-level imports included)."""
    out: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name, is_package = _module_name(path)
        found = runtime_imports(ast.parse(path.read_text(encoding="utf-8")), name, is_package)
        out[name] = found
    return out


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _internal_edges() -> dict[str, set[str]]:
    modules = set(_imports())
    edges: dict[str, set[str]] = {}
    for mod, names in _imports().items():
        # importing a parent package (re-exports) is not a dependency on the importer's siblings
        edges[mod] = {n for n in names if n in modules and n != mod and not mod.startswith(n + ".")}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    assert _cycles(_internal_edges()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_layering(room: str) -> None:
    bad = sorted(f"{mod} imports {name}" for mod, names in _imports().items() if _room(mod) == room
                 for name in names if name.startswith("dagster_streamt.") and _room(name) in FORBIDDEN[room])
    assert bad == []


def _spark_layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] != ["dagster_streamt", "spark"] or len(parts) < 3:
        return None
    return next(i for i, layer in enumerate(SPARK_LAYERS) if parts[2] in layer)


def test_spark_by_concept() -> None:
    """Every part of ``dagster_streamt.spark`` sits in one layer and imports nothing from a later one."""
    parts = {p.relative_to(PACKAGE / "spark").parts[0].removesuffix(".py") for p in (PACKAGE / "spark").glob("*")
             if p.name != "__init__.py" and (p.suffix == ".py" or (p / "__init__.py").exists())}
    assert parts == {name for layer in SPARK_LAYERS for name in layer}
    bad = sorted(f"{mod} imports {name}" for mod, names in _imports().items() if (at := _spark_layer(mod)) is not None
                 for name in names if (to := _spark_layer(name)) is not None and to > at)
    assert bad == []


@pytest.mark.parametrize("room", sorted(NO_ENGINES))
def test_rooms_without_engines(room: str) -> None:
    bad = sorted(f"{mod} imports {name}" for mod, names in _imports().items() if _room(mod) == room
                 for name in names if name.split(".")[0] in NO_ENGINES[room])
    assert bad == []


def test_one_sql_front_end() -> None:
    """Only ``dagster_streamt.sql`` tokenizes or parses SQL; everyone else walks its trees."""
    bad = []
    for mod, names in _imports().items():
        if _room(mod) == "sql":
            continue
        bad += [f"{mod} imports {n}" for n in names if n.startswith("sqlglot.") and n.split(".")[-1] in SQLGLOT_PARSERS]
    for path in PACKAGE.rglob("*.py"):
        mod, _ = _module_name(path)
        if _room(mod) != "sql":
            text = path.read_text(encoding="utf-8")
            bad += [f"{mod} calls sqlglot.{f}" for f in sorted(SQLGLOT_PARSERS) if f"sqlglot.{f}(" in text]
    assert bad == []


def test_one_identifier_quoting() -> None:
    """Names and paths are quoted for Spark SQL in one place (``dagster_streamt.sql.identifiers``): a
    column named ``a`b`` or a folder with a backtick in it is escaped the same way everywhere."""
    hand = ('replace("`", "``")', 'F.col(f"`{', "delta.`{")
    bad = sorted(f"{p.relative_to(PACKAGE)}: {h}" for p in PACKAGE.rglob("*.py") if p.name != "identifiers.py"
                 for h in hand if h in p.read_text(encoding="utf-8"))
    assert bad == []


def test_no_module_over_the_limit() -> None:
    long = sorted(f"{p.relative_to(PACKAGE)}: {n} lines" for p in PACKAGE.rglob("*.py")
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    assert long == []


def test_public_dagster_api_only() -> None:
    bad = sorted(f"{mod} imports {n}" for mod, names in _imports().items() for n in names
                 if n.startswith("dagster._"))
    assert bad == []


def test_plain_data_imports_need_no_engine() -> None:
    """The lineage CLI, validation and the Spark package's plain-data modules load without pyspark."""
    code = ("import sys; import dagster_streamt.api, dagster_streamt.spark, dagster_streamt.spark.storage.paths, "
            "dagster_streamt.spark.session.settings, dagster_streamt.core.results, dagster_streamt.validation, "
            "dagster_streamt.checks; "
            "print(sorted(m for m in ('pyspark', 'dagster') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout.strip()
    assert out == "[]"
