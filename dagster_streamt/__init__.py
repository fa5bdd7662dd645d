"""dagster-streamt: streamt-style declarative SQL pipelines on Spark, orchestrated by Dagster.

The top-level package imports nothing heavy so that the lineage CLI stays fast; the Spark and
Dagster layers live in ``dagster_streamt.spark`` and ``dagster_streamt.dagster``.
"""

from typing import Any

__version__ = "0.1.0"

_LAZY = {"StreamtProjectComponent": "dagster_streamt.components"}  # imports Dagster: only when asked for


def __getattr__(name: str) -> Any:
    """``dagster_streamt.StreamtProjectComponent`` (the name ``dg`` and defs.yaml use), imported lazily."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dagster_streamt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])  # `dg list components` looks the component up through dir()
