"""The marked public API: ``dagster_streamt.__all__`` is what users import, every name in it (and every
method of its classes) is documented with Args/Returns/Examples, and the examples run (doctest)."""

from __future__ import annotations

import doctest
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dagster_streamt

REPO = Path(__file__).parents[2]


def public() -> dict[str, Any]:
    return {name: getattr(dagster_streamt, name) for name in dagster_streamt.__all__ if name != "__version__"}


def methods(cls: type) -> Iterator[tuple[str, Any]]:
    """The public methods and properties a class defines itself (not those inherited from Dagster)."""
    for name, value in sorted(vars(cls).items()):
        if name.startswith("_") or name == "model_post_init":  # pydantic writes that one (private attributes)
            continue
        if isinstance(value, classmethod | staticmethod):
            value = value.__func__
        if isinstance(value, property):
            value = value.fget
        if inspect.isfunction(value):
            yield name, value


def documented() -> Iterator[tuple[str, Any]]:
    for name, obj in sorted(public().items()):
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield name, obj
        if inspect.isclass(obj):
            for method_name, method in methods(obj):
                yield f"{name}.{method_name}", method


def test_all_is_sorted_resolves_and_imports_nothing_heavy() -> None:
    assert dagster_streamt.__all__ == sorted(dagster_streamt.__all__)
    assert set(public()) | {"__version__"} == set(dagster_streamt.__all__)
    assert "StreamtProjectComponent" in dir(dagster_streamt)  # `dg list components` finds it through dir()
    code = ("import sys, dagster_streamt; "
            "print(sorted(m for m in ('dagster', 'pyspark', 'sqlglot') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"  # the lineage CLI stays fast: public names import on first use


def test_every_public_name_and_method_has_args_returns_examples() -> None:
    missing: list[str] = []
    for name, obj in documented():
        doc = inspect.getdoc(obj) or ""
        params = [p for p in inspect.signature(obj).parameters if p not in ("self", "cls")] \
            if not inspect.isclass(obj) else []
        if "Examples:" not in doc:
            missing.append(f"{name}: Examples")
        if params and "Args:" not in doc:
            missing.append(f"{name}: Args")
        if inspect.isfunction(obj) and inspect.signature(obj).return_annotation not in ("None", None) \
                and "Returns:" not in doc:
            missing.append(f"{name}: Returns")
        if inspect.isclass(obj) and ">>>" not in doc:
            missing.append(f"{name}: a runnable example")
    assert not missing, missing


def test_the_extension_points_have_runnable_examples() -> None:
    """Every translator method and every assertion-kind method shows a doctest, not prose only."""
    for cls in (dagster_streamt.StreamtTranslator, dagster_streamt.AssertionKind):
        for name, method in methods(cls):
            assert ">>>" in (inspect.getdoc(method) or ""), f"{cls.__name__}.{name}"


def test_the_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every docstring example of the public names (and of their modules) runs: doctest, no Spark."""
    monkeypatch.chdir(REPO)  # the examples load the example project as "project"
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    modules = sorted({inspect.getmodule(obj).__name__ for _, obj in documented()} | {"dagster_streamt"})
    attempted = 0
    for module_name in modules:
        module = sys.modules[module_name]
        for test in finder.find(module, module_name):
            result = runner.run(test, out=lambda text: None)
            assert result.failed == 0, f"{test.name} ({test.filename}:{test.lineno}) failed"
            attempted += result.attempted
    assert attempted >= 60  # the translator alone has over 60 example lines
    assert {"dagster_streamt.dagster.translator", "dagster_streamt.checks.kinds.base"} <= set(modules)
