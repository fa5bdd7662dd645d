"""What a change to a project means before anything runs: each model and source classed against a base
(``streamt diff``), with the downstream models, columns, exposures and owners it reaches."""

from .classify import CLASSES, Change, ChangeSet, classify

__all__ = ["CLASSES", "Change", "ChangeSet", "classify"]
