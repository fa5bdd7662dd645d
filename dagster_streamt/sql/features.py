"""What a query does, read from its tree: windows, aggregations, joins and other state.

streamt infers a model's materialization from this (stateless SELECT/WHERE vs. stateful windows,
aggregations and joins); Spark needs a watermark for the same stateful operations on a stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from .appends import func_name
from .normalize import TVF_NAMES

GROUP_WINDOWS = frozenset({"TUMBLE", "HOP", "SESSION", "CUMULATE", "WINDOW", "SESSION_WINDOW"})
_AGG_NAMES = frozenset({"LISTAGG", "COLLECT", "COLLECT_LIST", "COLLECT_SET", "APPROX_COUNT_DISTINCT"})


@dataclass(frozen=True)
class SqlFeatures:
    windows: tuple[str, ...] = ()  # TUMBLE, HOP, SESSION, CUMULATE (Flink) or window/session_window (Spark)
    window_tvf: bool = False  # Flink's TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...))
    aggregation: bool = False
    joins: tuple[str, ...] = ()  # join | interval join | temporal join
    distinct: bool = False
    order_by: bool = False
    over: bool = False  # window functions (ROW_NUMBER() OVER ...)

    @property
    def stateful(self) -> bool:
        return bool(self.windows or self.aggregation or self.joins or self.distinct or self.order_by or self.over)

    def describe(self) -> str:
        """Why the query is stateful, in a few words ('windowed aggregation (TUMBLE)')."""
        parts: list[str] = []
        if self.windows:
            kind = "window table function" if self.window_tvf else "windowed aggregation"
            parts.append(f"{kind} ({', '.join(self.windows)})")
        elif self.aggregation:
            parts.append("aggregation")
        parts.extend(self.joins)
        if self.distinct:
            parts.append("DISTINCT")
        if self.over:
            parts.append("window function (OVER)")
        if self.order_by:
            parts.append("ORDER BY")
        return ", ".join(parts) if parts else "stateless SELECT/WHERE"


def analyze(tree: exp.Expr) -> SqlFeatures:
    windows: set[str] = set()
    tvf = False
    for fn in tree.find_all(exp.Anonymous, exp.Func):
        name = func_name(fn)
        if name in GROUP_WINDOWS:
            in_from = fn.find_ancestor(exp.Table) is not None
            if in_from and name in TVF_NAMES:
                tvf = True
            windows.add(name if name in TVF_NAMES else name.lower())
    over = any(True for _ in tree.find_all(exp.Window))
    aggregation = any(isinstance(a, exp.AggFunc) and a.find_ancestor(exp.Window) is None
                      for a in tree.find_all(exp.AggFunc)) \
        or any(func_name(a) in _AGG_NAMES for a in tree.find_all(exp.Anonymous)) \
        or any(s.args.get("group") is not None for s in tree.find_all(exp.Select))
    distinct = any(s.args.get("distinct") is not None for s in tree.find_all(exp.Select))
    order_by = any(isinstance(o.parent, exp.Select | exp.Union) or o.parent is tree for o in tree.find_all(exp.Order)
                   if o.find_ancestor(exp.Window) is None)
    return SqlFeatures(tuple(sorted(windows)), tvf, aggregation, _joins(tree), distinct, order_by, over)


def _joins(tree: exp.Expr) -> tuple[str, ...]:
    kinds: set[str] = set()
    for select in tree.find_all(exp.Select):
        joins = select.args.get("joins") or []
        if not joins:
            continue
        tables = [select.args.get("from_"), *joins]  # sqlglot names the FROM clause `from_`
        if any(t is not None and t.find(exp.Version) is not None for t in tables):
            kinds.add("temporal join")
        conditions = [j.args.get("on") for j in joins] + [select.args.get("where")]
        if any(c is not None and c.find(exp.Interval) is not None for c in conditions):
            kinds.add("interval join")
        if not kinds & {"temporal join", "interval join"}:
            kinds.add("join")
    return tuple(sorted(kinds))
