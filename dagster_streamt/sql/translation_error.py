"""The error of a Flink construct with no Spark equivalent, shared by the translator's modules."""

from __future__ import annotations


class TranslationError(ValueError):
    """A construct with no Spark equivalent; ``construct`` names it for the located error."""

    def __init__(self, construct: str, message: str) -> None:
        super().__init__(message)
        self.construct = construct
