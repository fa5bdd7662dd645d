"""dagster-streamt: streamt-style declarative SQL pipelines on Spark, orchestrated by Dagster.

The public API is exactly the names in ``__all__`` below, importable from ``dagster_streamt``;
every other module and name (including the sub-packages' own ``__all__``) is internal and may change
between releases. ``docs/api.md`` is generated from these names' docstrings, and their examples run in
the test suite (``tests/docs/test_public_api.py``).

The top-level package imports nothing heavy so that the lineage CLI stays fast: each public name is
imported on first use (``build_definitions`` and the component import Dagster, nothing here imports
Spark).

Examples:
    >>> import dagster_streamt
    >>> "build_definitions" in dagster_streamt.__all__
    True
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> (module, name in that module); imported on first attribute access
_LAZY = {
    "load": ("dagster_streamt.api", "load"),
    "LoadedProject": ("dagster_streamt.core.loaded", "LoadedProject"),
    "ProjectError": ("dagster_streamt.spec.errors", "ProjectError"),
    "build_definitions": ("dagster_streamt.dagster.definitions", "build_definitions"),
    "StreamtTranslator": ("dagster_streamt.dagster.translator", "StreamtTranslator"),
    "SparkResource": ("dagster_streamt.dagster.resources", "SparkResource"),
    "StreamtProjectComponent": ("dagster_streamt.components", "StreamtProjectComponent"),
    "AssertionKind": ("dagster_streamt.checks.kinds", "AssertionKind"),
    "register_assertion": ("dagster_streamt.checks.kinds", "register"),
    "ASSERTION_KINDS": ("dagster_streamt.checks.kinds", "KINDS"),
}

__all__ = [
    "ASSERTION_KINDS",
    "AssertionKind",
    "LoadedProject",
    "ProjectError",
    "SparkResource",
    "StreamtProjectComponent",
    "StreamtTranslator",
    "__version__",
    "build_definitions",
    "load",
    "register_assertion",
]

if TYPE_CHECKING:
    from .api import load
    from .checks.kinds import KINDS as ASSERTION_KINDS
    from .checks.kinds import AssertionKind
    from .checks.kinds import register as register_assertion
    from .components import StreamtProjectComponent
    from .core.loaded import LoadedProject
    from .dagster.definitions import build_definitions
    from .dagster.resources import SparkResource
    from .dagster.translator import StreamtTranslator
    from .spec.errors import ProjectError


def __getattr__(name: str) -> Any:
    """Import a public name on first use (``dagster_streamt.StreamtProjectComponent`` is what ``dg`` loads)."""
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dagster_streamt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})  # `dg list components` looks the component up through dir()
