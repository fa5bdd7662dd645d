"""Dagster glue: the project as software-defined assets (imports dagster; the core does not)."""

from .definitions import build_definitions
from .key_map import KeyMap
from .resources import SparkResource
from .translator import StreamtTranslator

__all__ = ["KeyMap", "SparkResource", "StreamtTranslator", "build_definitions"]
