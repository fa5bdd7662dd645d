"""Dagster glue: the project as software-defined assets (imports dagster; the core does not)."""

from .definitions import build_definitions
from .translator import StreamtTranslator

__all__ = ["StreamtTranslator", "build_definitions"]
