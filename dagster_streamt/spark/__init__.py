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
    "ProjectMovedError": ".storage.state", "check_project_root": ".storage.state",
    "ProjectPaths": ".storage.paths",
    "Warehouse": ".storage.warehouse",
    "SparkSettings": ".session.settings",
    "check_java": ".session.java",
    "create_session": ".session.session", "is_connect": ".session.session", "stop_session": ".session.session",
    "ensure_project_server": ".session.project_server", "stop_project_server": ".session.project_server",
    "full_refresh": ".storage.reset",
    "quarantine_name": ".sources.quarantine", "read_quarantine": ".sources.quarantine",
    "register_model_view": ".sources.relations", "register_source_view": ".sources.relations",
    "run_models": ".runner", "run_one": ".runner",
}

if TYPE_CHECKING:
    from ..core.results import ModelResult
    from .errors import ModelRunError, SparkSetupError, describe_exception
    from .runner import run_models, run_one
    from .session.java import check_java
    from .session.project_server import ensure_project_server, stop_project_server
    from .session.session import create_session, is_connect, stop_session
    from .session.settings import SparkSettings
    from .sources.quarantine import quarantine_name, read_quarantine
    from .sources.relations import register_model_view, register_source_view
    from .storage.paths import ProjectPaths
    from .storage.reset import full_refresh
    from .storage.state import ProjectMovedError, check_project_root
    from .storage.warehouse import Warehouse


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ModelResult", "ModelRunError", "ProjectMovedError", "ProjectPaths", "SparkSettings",
    "SparkSetupError", "Warehouse", "check_java", "check_project_root", "create_session", "describe_exception",
    "ensure_project_server", "full_refresh", "is_connect", "quarantine_name", "read_quarantine",
    "register_model_view", "register_source_view", "run_models", "run_one", "stop_project_server", "stop_session",
]
