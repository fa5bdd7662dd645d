"""Harvest the projects streamt's own tests build, with what streamt does with each (a pytest plugin).

Run it inside a virtualenv holding streamt (conduktor/streamt, Apache-2.0) and its test suite; it
does not run under our suite (it imports streamt):

    python -m pytest -p harvest tests/unit tests/scenarios   # cwd: a streamt checkout, PYTHONPATH: here
    STREAMT_HARVEST_OUT=<dir> decides where the cases go (default ./cases)

Every ``ProjectParser.parse()`` a test triggers (directly or through the CLI) becomes one case: the
project's files as the test wrote them, the environment the parser was given, and streamt's verdict
(parse error, validator codes, DAG edges and order, materializations, warnings). The verdict is what
streamt computes, not what we think it should be; ``test_streamt_suite.py`` replays the cases.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

CASES: list[dict[str, Any]] = []
SEEN: set[str] = set()
OUTCOME: dict[str, bool] = {}
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")
SKIP_DIRS = {".streamt", "target", "__pycache__", "generated"}


def _snapshot(root: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or SKIP_DIRS & set(rel.parts):
            continue
        try:
            files[rel.as_posix()] = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
    return files


def _verdict(project: Any) -> dict[str, Any]:
    from streamt.core.dag import DAGBuilder
    from streamt.core.validator import ProjectValidator

    result = ProjectValidator(project).validate()
    out: dict[str, Any] = {
        "parsed": True, "valid": result.is_valid,
        "errors": sorted({m.code for m in result.errors}),
        "error_messages": sorted(m.message for m in result.errors),
        "warnings": sorted({m.code for m in result.warnings}),
    }
    if any(m.code == "CYCLE_DETECTED" for m in result.errors):
        return out
    dag = DAGBuilder(project).build()
    out["nodes"] = {name: node.type.value for name, node in sorted(dag.nodes.items())}
    out["edges"] = sorted([a, b] for a, node in dag.nodes.items() for b in node.downstream)
    try:
        out["order"] = dag.topological_sort()
    except Exception as exc:  # a cycle streamt's validator did not flag
        out["order_error"] = str(exc)
    out["materialized"] = {m.name: m.get_materialized().value for m in project.models}
    return out


def _record(parser: Any, verdict: dict[str, Any], files: dict[str, str], warnings: list[str]) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
    names = sorted({v for text in files.values() for v in VARIABLE.findall(text)} | {"STREAMT_ENV"})
    empty = sorted(p.relative_to(parser.project_path).as_posix() for p in parser.project_path.rglob("*")
                   if p.is_dir() and not any(p.iterdir()))
    case = {"origin": test, "env": parser.environment, "empty_dirs": empty,
            "environ": {n: os.environ.get(n) for n in names if os.environ.get(n) is not None},
            "files": files, "expect": {**verdict, "warnings_text": sorted(set(warnings))}}
    key = hashlib.sha256(yaml.safe_dump({k: case[k] for k in ("env", "empty_dirs", "environ", "files", "expect")},
                                        sort_keys=True).encode()).hexdigest()
    if key not in SEEN:
        SEEN.add(key)
        CASES.append(case)


def pytest_configure(config: pytest.Config) -> None:
    from streamt.core import parser as parser_module

    original = parser_module.ProjectParser.parse

    def parse(self: Any) -> Any:
        files = _snapshot(self.project_path)
        warned: list[str] = []
        callback = self.warn_callback
        self.warn_callback = lambda text: (warned.append(re.sub(r"\[/?\w+\]", "", str(text))), callback(text))[1]
        try:
            project = original(self)
        except Exception as exc:
            _record(self, {"parsed": False, "error": type(exc).__name__, "message": str(exc).split("\n")[0]},
                    files, warned)
            raise
        finally:
            self.warn_callback = callback
        _record(self, _verdict(project), files, warned)
        return project

    parser_module.ProjectParser.parse = parse  # type: ignore[method-assign]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        OUTCOME[report.nodeid] = report.passed


def pytest_unconfigure(config: pytest.Config) -> None:
    out = Path(os.environ.get("STREAMT_HARVEST_OUT", "cases"))
    counts: dict[str, int] = {}
    for case in CASES:
        module, _, name = case["origin"].partition("::")
        stem = Path(module).stem.removeprefix("test_")
        slug = re.sub(r"[^A-Za-z0-9]+", "_", name.split("::")[-1].removeprefix("test_")).strip("_")[:60]
        base = f"{stem}/{slug}"
        counts[base] = counts.get(base, 0) + 1
        case["streamt_test_passed"] = OUTCOME.get(case["origin"], False)
        target = out / f"{base}{'' if counts[base] == 1 else f'_{counts[base]}'}.yml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.dump(case, sort_keys=False, allow_unicode=True, width=1000,
                                    Dumper=_LiteralDumper))


class _LiteralDumper(yaml.SafeDumper):
    """File contents as ``|`` blocks, so each case reads as the project it is."""


def _str(dumper: yaml.SafeDumper, value: str) -> Any:
    style = "|" if "\n" in value and not re.search(r"[ \t]\n|\t", value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _str)
