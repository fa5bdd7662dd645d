"""Run streamt models on Spark and report what happened. Knows nothing of Dagster.

Entry points: :func:`create_session` (embedded local, Spark Connect or a cluster master),
:func:`run_models` (a selection, in levels, yielding a :class:`ModelResult` per model),
:func:`full_refresh`, :func:`register_model_view` and :class:`Warehouse` for reading stored models.
"""

from .connect_server import ensure_connect_server, stop_connect_server
from .errors import ModelRunError, SparkSetupError, describe_exception
from .java import check_java
from .paths import ProjectPaths
from .quarantine import quarantine_name, read_quarantine
from .relations import register_model_view, register_source_view
from .reset import full_refresh
from .results import ModelResult
from .runner import run_models, run_one
from .session import SparkSettings, create_session, is_connect, stop_session
from .state import ProjectMovedError, check_project_root
from .warehouse import RegistryEntry, Warehouse

__all__ = [
    "ModelResult",
    "ModelRunError",
    "ProjectMovedError",
    "ProjectPaths",
    "RegistryEntry",
    "SparkSettings",
    "SparkSetupError",
    "Warehouse",
    "check_java",
    "check_project_root",
    "create_session",
    "describe_exception",
    "ensure_connect_server",
    "full_refresh",
    "is_connect",
    "quarantine_name",
    "read_quarantine",
    "register_model_view",
    "register_source_view",
    "run_models",
    "run_one",
    "stop_connect_server",
    "stop_session",
]
