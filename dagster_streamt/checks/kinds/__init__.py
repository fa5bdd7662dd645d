"""The assertion registry: importing this package registers every built-in kind."""

from __future__ import annotations

from . import aggregates, progress, rows  # noqa: F401 - each module registers its kinds
from .base import ALIASES, KINDS, AssertionKind, Evidence, Mode, StreamProgress, register

__all__ = ["ALIASES", "KINDS", "AssertionKind", "Evidence", "Mode", "StreamProgress", "register"]
