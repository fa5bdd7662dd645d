"""Run streamt models on Spark and report what happened. Knows nothing of Dagster.

Entry points: :func:`create_session` (embedded local, Spark Connect or a cluster master),
:func:`run_models` (a selection, in levels, yielding a :class:`ModelResult` per model),
:func:`full_refresh`, :func:`register_model_view` and :class:`Warehouse` for reading stored models.

Names resolve on first use: importing ``dagster_streamt.spark`` (or a plain-data module in it such
as :mod:`.paths` or :mod:`.settings`) does not import pyspark.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_LAZY = {
    "ModelResult": "..core.results",
    "ModelRunError": ".errors", "SparkSetupError": ".errors", "describe_exception": ".errors",
    "ProjectMovedError": ".state", "check_project_root": ".state",
    "ProjectPaths": ".paths",
    "RegistryEntry": ".warehouse", "Warehouse": ".warehouse",
    "SparkSettings": ".settings",
    "check_java": ".java",
    "create_session": ".session", "is_connect": ".session", "stop_session": ".session",
    "ensure_project_server": ".project_server", "stop_project_server": ".project_server",
    "full_refresh": ".reset",
    "quarantine_name": ".quarantine", "read_quarantine": ".quarantine",
    "register_model_view": ".relations", "register_source_view": ".relations",
    "run_models": ".runner", "run_one": ".runner",
}

if TYPE_CHECKING:
    from ..core.results import ModelResult
    from .errors import ModelRunError, SparkSetupError, describe_exception
    from .java import check_java
    from .paths import ProjectPaths
    from .project_server import ensure_project_server, stop_project_server
    from .quarantine import quarantine_name, read_quarantine
    from .relations import register_model_view, register_source_view
    from .reset import full_refresh
    from .runner import run_models, run_one
    from .session import create_session, is_connect, stop_session
    from .settings import SparkSettings
    from .state import ProjectMovedError, check_project_root
    from .warehouse import RegistryEntry, Warehouse


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ModelResult", "ModelRunError", "ProjectMovedError", "ProjectPaths", "RegistryEntry", "SparkSettings",
    "SparkSetupError", "Warehouse", "check_java", "check_project_root", "create_session", "describe_exception",
    "ensure_project_server", "full_refresh", "is_connect", "quarantine_name", "read_quarantine",
    "register_model_view", "register_source_view", "run_models", "run_one", "stop_project_server", "stop_session",
]
