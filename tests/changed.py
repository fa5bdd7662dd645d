"""``pytest --changed[=BASE]``: only the test files a change can reach (a pytest plugin, see conftest.py).

What changed: ``git diff --name-only BASE`` (default ``HEAD``: the uncommitted work) plus new files. A
test file is kept when it, or a module it reaches, changed: its imports are followed through the package
and the tests' own helpers (function-level imports too, as tests/test_architecture.py reads them), and a
test that runs the CLI in a subprocess (``"streamt"``, ``-m dagster_streamt.cli``) or names a module in a
string reaches that module (the package's own lazy names and typing-only imports do not). A package
data file (a template, the docs site's page) counts as its package's ``__init__``. A change to the build
(pyproject.toml, .ci/, scripts/) or to tests/conftest.py keeps everything. Static imports cannot see
everything (a module loaded by name from YAML): the whole suite stays what CI runs; this is for the
edit-test loop.
"""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EVERYTHING = ("pyproject.toml", ".ci/", "scripts/", "tests/conftest.py", "tests/changed.py")
_NAMED = re.compile(r"\b(dagster_streamt(?:\.\w+)*|tests(?:\.\w+)+)\b")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--changed", nargs="?", const="HEAD", default=None, metavar="BASE",
                     help="run only the test files that a change since BASE (default HEAD: uncommitted work) "
                          "can reach through imports")


def _changed_files(base: str) -> list[str]:
    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        if out.returncode != 0:
            raise pytest.UsageError(f"--changed {base}: git {' '.join(args)} failed: {out.stderr.strip()}")
        return [line for line in out.stdout.splitlines() if line]

    return sorted(set(git("diff", "--name-only", base)) | set(git("ls-files", "--others", "--exclude-standard")))


def _module_of(rel: str) -> str | None:
    """The module a changed file belongs to: itself for a .py file, its package for a data file."""
    path = Path(rel)
    if path.parts[0] not in ("dagster_streamt", "tests"):
        return None
    if path.suffix == ".py":
        parts = list(path.with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    folder = REPO / path.parent
    while folder != REPO and not (folder / "__init__.py").is_file():
        folder = folder.parent
    return ".".join(folder.relative_to(REPO).parts) or None


def _file_of(module: str) -> Path | None:
    base = REPO.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def runtime_imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every dotted name ``module`` imports at run time: function-level imports included, the ones under
    ``if TYPE_CHECKING:`` left out, relative imports made absolute (``from .x import y`` gives ``pkg.x``
    and ``pkg.x.y``). Shared with tests/test_architecture.py."""
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in
                   ast.unparse(node.test) for n in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join([*base, *([node.module] if node.module else [])])
            else:
                stem = node.module or ""
            found.add(stem)
            found |= {f"{stem}.{a.name}" for a in node.names}
    return found


@cache
def _reaches(module: str) -> frozenset[str]:
    """``module``'s direct dependencies among the package's and the tests' modules."""
    path = _file_of(module)
    if path is None:
        return frozenset()
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    found = runtime_imports(tree, module, path.name == "__init__.py")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and module.startswith("tests"):
            found |= set(_NAMED.findall(node.value))
            if node.value == "streamt":  # the console script
                found.add("dagster_streamt.cli.main")
    out = set()
    for name in found:
        parts = name.split(".")
        while parts and _file_of(".".join(parts)) is None:
            parts.pop()
        if parts and parts[0] in ("dagster_streamt", "tests"):
            out.add(".".join(parts))
            out |= {".".join(parts[:i]) for i in range(1, len(parts)) if _file_of(".".join(parts[:i]))}
    return frozenset(out - {module})


@cache
def _closure(module: str) -> frozenset[str]:
    seen, todo = {module}, [module]
    while todo:
        for dep in _reaches(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return frozenset(seen)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    base = config.getoption("--changed")
    if base is None:
        return
    files = _changed_files(base)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    build = sorted(f for f in files if f.startswith(EVERYTHING))
    if build:
        if reporter is not None:
            reporter.write_line(f"--changed {base}: {', '.join(build)} changed: every test runs")
        return
    changed = {m for m in map(_module_of, files) if m}
    keep, drop = [], []
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(REPO)
        module = ".".join(rel.with_suffix("").parts)
        (keep if _closure(module) & changed else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    if reporter is not None:
        kept = len({i.fspath for i in keep})
        reporter.write_line(f"--changed {base}: {len(files)} changed file(s); {kept} test file(s), "
                            f"{len(keep)} test(s) reach them")
