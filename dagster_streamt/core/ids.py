"""Typed node ids of the project graph: ``source.x``, ``model.y``, ``exposure.z``, ``test.t``.

Names may contain dots (``orders.v2``), the kind never does, so an id splits at its first dot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NewType

NodeId = NewType("NodeId", str)
NodeKind = Literal["source", "model", "exposure", "test"]
NODE_TYPES: tuple[NodeKind, ...] = ("source", "model", "exposure", "test")


def node_id(kind: str, name: str) -> NodeId:
    return NodeId(f"{kind}.{name}")


def split_id(nid: str) -> tuple[str, str]:
    kind, _, name = nid.partition(".")
    return kind, name


def name_of(nid: str) -> str:
    return nid.partition(".")[2]


def kind_of(nid: str) -> str:
    return nid.partition(".")[0]


def names_of(ids: Iterable[str], kind: str | None = None) -> list[str]:
    """The names of ``ids`` in their order, keeping only ``kind`` when given."""
    return [name_of(i) for i in ids if kind is None or kind_of(i) == kind]
