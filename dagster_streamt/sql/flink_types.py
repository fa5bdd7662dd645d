"""Flink's typing where Spark's differs, and Flink-only syntax the Spark dialect prints back unchanged.

- ``INT / INT`` is an integer in Flink (truncated toward zero) and a double in Spark: it becomes
  ``a DIV b`` (cast back to INT when both sides are at most INT); ``AVG`` of an integer column is an
  integer in Flink: ``CAST(AVG(x) AS <its type>)``. Integer-ness is read from literals, casts, COUNT and
  the declared column types of the query's inputs (a :class:`Catalog`); an expression whose type is
  unknown keeps Spark's arithmetic.
- ``FLOOR(ts TO HOUR)`` is ``date_trunc('HOUR', ts)``; ``CEIL(ts TO HOUR)`` the next boundary unless ts is on one.
- ``FLOOR``/``CEIL`` of a DOUBLE stay DOUBLE in Flink (Spark gives BIGINT): cast back.
- ``CAST(x AS TIMESTAMP(3))``: Spark's TIMESTAMP has no precision (microseconds); the precision is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlglot import exp

from .translation_error import TranslationError

INTEGER_TYPES = {"TINYINT": 1, "SMALLINT": 2, "INT": 3, "INTEGER": 3, "BIGINT": 4, "BYTE": 1, "SHORT": 2, "LONG": 4}
_TYPE_NAMES = {1: "TINYINT", 2: "SMALLINT", 3: "INT", 4: "BIGINT"}
_INT_DTYPES = {exp.DataType.Type.TINYINT: 1, exp.DataType.Type.SMALLINT: 2, exp.DataType.Type.INT: 3,
               exp.DataType.Type.BIGINT: 4}
_UNITS = frozenset({"SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"})


@dataclass(frozen=True)
class Catalog:
    """What the query's inputs declare, by the relation name the rendered SQL reads:
    ``columns[relation][column] = type`` (Flink or Spark type names) and each input's event-time column."""

    columns: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    event_times: Mapping[str, str] = field(default_factory=dict)

    def column_types(self, tree: exp.Expr) -> dict[str, str]:
        """Column name (lower case) -> type, over the relations ``tree`` reads; names whose type differs
        between two inputs are left out (unknown)."""
        out: dict[str, str] = {}
        clash: set[str] = set()
        for table in tree.find_all(exp.Table):
            for col, kind in self.columns.get(table.name, {}).items():
                key, kind = col.lower(), kind.upper().split("(")[0].strip()
                if out.setdefault(key, kind) != kind:
                    clash.add(key)
        return {k: v for k, v in out.items() if k not in clash}


def int_rank(node: exp.Expr, types: Mapping[str, str]) -> int:
    """The integer width of ``node`` (1 TINYINT .. 4 BIGINT), 0 when it is not known to be an integer."""
    if isinstance(node, exp.Paren | exp.Neg | exp.Alias):
        return int_rank(node.this, types)
    if isinstance(node, exp.Literal):
        text = node.name
        return (3 if abs(int(text)) < 2**31 else 4) if not node.is_string and text.lstrip("-").isdigit() else 0
    if isinstance(node, exp.Column):
        return INTEGER_TYPES.get(types.get(node.name.lower(), ""), 0)
    if isinstance(node, exp.Cast):
        return _INT_DTYPES.get(node.to.this, 0) if isinstance(node.to, exp.DataType) else 0
    if isinstance(node, exp.Count):
        return 4
    if isinstance(node, exp.Sum | exp.Min | exp.Max | exp.Avg | exp.Abs):
        return int_rank(node.this, types)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Mod | exp.IntDiv):
        left, right = int_rank(node.this, types), int_rank(node.expression, types)
        return max(left, right) if left and right else 0
    return 0


def is_double(node: exp.Expr, types: Mapping[str, str]) -> bool:
    """Is ``node`` known to be a DOUBLE/FLOAT (a declared column, a cast, arithmetic on one)?"""
    if isinstance(node, exp.Paren | exp.Neg):
        return is_double(node.this, types)
    if isinstance(node, exp.Column):
        return types.get(node.name.lower(), "") in ("DOUBLE", "FLOAT", "REAL")
    if isinstance(node, exp.Cast):
        return isinstance(node.to, exp.DataType) and node.to.this in (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div):
        return is_double(node.this, types) or is_double(node.expression, types)
    return False


def rewrite(tree: exp.Expr, types: Mapping[str, str]) -> bool:
    """Apply the rewrites above in place (bottom-up, so a division sees its rewritten operands)."""
    changed = False
    for node in list(tree.find_all(exp.Div, exp.Avg, exp.Floor, exp.Ceil, exp.Cast))[::-1]:
        if isinstance(node, exp.Div):
            left, right = int_rank(node.this, types), int_rank(node.expression, types)
            if left and right:
                div: exp.Expr = exp.IntDiv(this=node.this.copy(), expression=node.expression.copy())
                if max(left, right) < 4:
                    div = exp.cast(div, _TYPE_NAMES[max(left, right)])
                node.replace(div)
                changed = True
        elif isinstance(node, exp.Avg) and node.find_ancestor(exp.Window) is None:
            rank = int_rank(node.this, types)
            if rank and node.find_ancestor(exp.Cast) is None:
                node.replace(exp.cast(node.copy(), _TYPE_NAMES[rank]))
                changed = True
        elif isinstance(node, exp.Floor | exp.Ceil) and node.args.get("to") is not None:
            node.replace(_floor_ceil(node))
            changed = True
        elif isinstance(node, exp.Floor | exp.Ceil) and is_double(node.this, types):  # Spark: BIGINT
            node.replace(exp.cast(node.copy(), "DOUBLE"))
            changed = True
        elif isinstance(node, exp.Cast) and isinstance(node.to, exp.DataType) and node.to.expressions \
                and node.to.this in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ,
                                     exp.DataType.Type.TIMESTAMPNTZ):
            node.set("to", exp.DataType.build("TIMESTAMP"))
            changed = True
    return changed


def _floor_ceil(node: exp.Floor | exp.Ceil) -> exp.Expr:
    unit = node.args["to"].name.upper()
    if unit not in _UNITS:

        raise TranslationError(f"{node.key.upper()} TO {unit}", f"cannot round a time to {unit}; "
                               f"use date_trunc('HOUR', ts) with one of {', '.join(sorted(_UNITS))}")
    ts = node.this
    floor = exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string(unit), ts.copy()])  # not TRUNC (dates)
    if isinstance(node, exp.Floor):
        return floor
    step = exp.Interval(this=exp.Literal.string("1"), unit=exp.var(unit))
    return exp.If(this=exp.EQ(this=floor.copy(), expression=ts.copy()), true=floor.copy(),
                  false=exp.Add(this=floor, expression=step))
