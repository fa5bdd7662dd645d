"""Expression half of the column-lineage walk: which columns an expression reads, and how.

A *mode* ``(type, subtype)`` travels down the expression tree: the top of a SELECT item is
DIRECT/IDENTITY, function arguments are TRANSFORMATION, aggregate arguments AGGREGATION, CASE
conditions and window PARTITION/ORDER switch to INDIRECT. Columns found at the leaves are
resolved through the :class:`Scope` and composed with the mode they were found in.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dagster_streamt.lineage.column_scope import (
    DIRECT,
    NO,
    BaseRel,
    DerivedRel,
    Edge,
    Edges,
    Mode,
    Scope,
    bump,
    compose,
    indirect,
)

# Aggregates sqlglot's spark dialect leaves as Anonymous functions.
_ANON_AGGS = frozenset(
    {
        *("collect_list", "collect_set", "percentile_approx", "approx_percentile", "percentile", "median"),
        *("mode", "every", "some", "bool_and", "bool_or", "bit_and", "bit_or", "bit_xor", "try_sum", "try_avg"),
        *("histogram_numeric", "kurtosis", "skewness", "regr_avgx", "regr_avgy", "regr_count", "regr_slope"),
        *("regr_intercept", "regr_r2", "count_min_sketch", "hll_sketch_agg", "listagg", "string_agg", "array_agg"),
    }
)
# sqlglot models these window functions as AggFunc, but they pick a row's value, not aggregate.
_VALUE_PICKERS: tuple[type, ...] = (exp.Lag, exp.Lead, exp.NthValue, exp.FirstValue, exp.LastValue)


def is_time_window(node: exp.Expr) -> str | None:
    """Output name of Spark's ``window(...)``/``session_window(...)`` call (the front end restores
    their names after parsing), else None."""
    name = node.name.lower() if isinstance(node, exp.Anonymous) else None
    return name if name in ("window", "session_window") else None


def is_agg(node: exp.Expr) -> bool:
    """Whether columns below ``node`` are AGGREGATION inputs (row-combining function)."""
    if isinstance(node, exp.AggFunc):
        return not isinstance(node, _VALUE_PICKERS)
    return isinstance(node, exp.Anonymous) and node.name.lower() in _ANON_AGGS


class ExprWalker:
    """Walks expressions; :class:`ModelWalker` adds queries and relations (mutual recursion)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.warnings: dict[str, None] = {}

    def warn(self, message: str) -> None:
        self.warnings.setdefault(f"{self.model}: {message}")

    def query(self, node: exp.Expr, outer: Scope | None, ctes: dict[str, Any]) -> DerivedRel:
        """Lineage of a (sub)query; implemented by :class:`ModelWalker`."""
        raise NotImplementedError

    # ------------------------------------------------------------- expressions
    def expr(self, node: exp.Expr, scope: Scope, mode: Mode) -> set[Edge]:
        """Edges of every column below ``node``, composed with how ``node`` uses them."""
        if isinstance(node, exp.Column):
            return self._column(node, scope, mode)
        if isinstance(node, (exp.Alias, exp.Paren, exp.Ordered, exp.Aliases)):
            return self.expr(node.this, scope, mode)
        if isinstance(node, (exp.Case, exp.If)):
            return self._conditional(node, scope, mode)
        if isinstance(node, exp.Window):
            return self._window(node, scope, mode)
        if isinstance(node, exp.Filter):
            out = self.expr(node.this, scope, mode)
            return out | self.expr(node.expression.this, scope, indirect(mode, "FILTER"))
        if isinstance(node, exp.Exists):
            return set(self.query(node.this, scope, scope.ctes).dataset)
        if isinstance(node, exp.Query):
            rel = self.query(node, scope, scope.ctes)
            values: set[Edge] = set().union(*(e for _, e in rel.items))
            return compose(mode, values) | rel.dataset
        if isinstance(node, exp.Lambda):
            saved = scope.lambda_vars
            scope.lambda_vars = saved | {i.name.lower() for i in node.expressions}
            try:
                return self.expr(node.this, scope, bump(mode, "TRANSFORMATION"))
            finally:
                scope.lambda_vars = saved
        child_mode = bump(mode, "AGGREGATION" if is_agg(node) else "TRANSFORMATION")
        out = set()
        for child in node.iter_expressions():
            out |= self.expr(child, scope, child_mode)
        return out

    def _conditional(self, node: exp.Case | exp.If, scope: Scope, mode: Mode) -> set[Edge]:
        cond, value = indirect(mode, "CONDITIONAL"), bump(mode, "TRANSFORMATION")
        out: set[Edge] = set()
        if isinstance(node, exp.If):
            out |= self.expr(node.this, scope, cond)
            for key in ("true", "false"):
                if node.args.get(key) is not None:
                    out |= self.expr(node.args[key], scope, value)
            return out
        if node.this is not None:  # CASE x WHEN ...: the operand decides the branch
            out |= self.expr(node.this, scope, cond)
        for branch in node.args.get("ifs") or ():
            out |= self.expr(branch.this, scope, cond)
            out |= self.expr(branch.args["true"], scope, value)
        if node.args.get("default") is not None:
            out |= self.expr(node.args["default"], scope, value)
        return out

    def _window(self, node: exp.Window, scope: Scope, mode: Mode) -> set[Edge]:
        out = self.expr(node.this, scope, mode)
        spec_mode = indirect(mode, "WINDOW")
        seen: set[str] = set()
        spec: exp.Expr | None = node
        while spec is not None:
            for p in spec.args.get("partition_by") or ():
                out |= self.expr(p, scope, spec_mode)
            if spec.args.get("order") is not None:
                out |= self.expr(spec.args["order"], scope, spec_mode)
            ref = spec.args.get("alias") if spec is node else spec.this
            name = ref.name.lower() if isinstance(ref, exp.Identifier) else ""
            spec = None
            if name and name not in seen:
                seen.add(name)
                spec = scope.named_windows.get(name)
                if spec is None and ref is node.args.get("alias"):
                    self.warn(f"window '{name}' is not defined in a WINDOW clause")
        return out

    def _column(self, node: exp.Column, scope: Scope, mode: Mode) -> set[Edge]:
        if isinstance(node.this, exp.Star):
            return set()
        parts = [p.name for p in node.parts]
        if parts[0].lower() in scope.lambda_vars:
            return set()
        edges: Edges | None = None
        fields = parts[1:]
        rel = scope.find_rel(parts[0].lower()) if len(parts) > 1 else None
        if rel is not None:
            column, fields = parts[1], parts[2:]
            edges = rel.lookup(column)
            if edges is None:
                if rel.probe(column) != NO:
                    self.warn(f"cannot attribute column '{parts[0]}.{column}' (unknown columns in '{rel.alias}')")
                elif isinstance(rel, BaseRel):
                    self.warn(f"column '{parts[0]}.{column}' not found: '{rel.relation}' has no such column")
                    edges = frozenset({(rel.relation, column, DIRECT, "IDENTITY")})
                else:
                    self.warn(f"column '{parts[0]}.{column}' not found: '{rel.alias}' has no such column")
        else:
            edges = scope.resolve(parts[0], display=".".join(parts))
        if not edges:
            return set()
        return compose(bump(mode, "TRANSFORMATION") if fields else mode, edges)
