"""An aggregation query split into a mergeable state and a final projection over it.

``SELECT country, window.start, count(*), avg(amount) FROM t GROUP BY country, window(ts, '1 hour')``
becomes

* a *partial* query over the input rows, one row per group: the group keys, and partial aggregates
  that merge by a plain aggregate (``count`` by ``sum``, ``avg`` as a sum and a count, ``min`` by
  ``min`` ...);
* a *final* query over those state rows that computes exactly the model's columns.

A refresh after rows were appended to the input aggregates only the new rows, merges that state
with the stored one (grouping both by the keys) and recomputes the final columns of the small
state. ``count(DISTINCT x)`` (and ``sum``/``avg`` ``DISTINCT``) also keeps the *set* of (group, x)
pairs seen so far, which only ever grows: a refresh finds the pairs of the new rows that are not in
it yet, appends them, and adds their count (sum) to the group's state. Every DISTINCT aggregate of
the query must then read the same columns.

Whatever cannot be merged exactly (``percentile``, ``first``, ``collect_list``, GROUPING SETS,
session windows, a window function over the aggregates) is reported with its reason; the model is
then recomputed in full.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from .appends import aggregate_calls, aggregates_at, func_name

STATE = "__streamt_state__"  # the relation the final query reads
_MERGE: dict[type[exp.Expr], str] = {exp.Count: "sum", exp.Sum: "sum", exp.Min: "min", exp.Max: "max",
                                     exp.CountIf: "sum", exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or",
                                     exp.Any: "bool_or"}  # by exact class
_ANONYMOUS_MERGE = {"EVERY": "bool_and", "BOOL_AND": "bool_and", "SOME": "bool_or", "BOOL_OR": "bool_or"}
_GROUP_WINDOWS = {"WINDOW": "window"}  # tumbling and sliding windows: a row's windows never change


@dataclass(frozen=True)
class StateColumn:
    name: str
    merge: str  # the aggregate that merges two partial values: sum | min | max | bool_and | bool_or


@dataclass(frozen=True)
class Tally:
    """A DISTINCT aggregate's state column, summed over the group's new (group, value) pairs."""

    name: str
    kind: str  # count: pairs whose DISTINCT values are all set | sum: the sum of the (single) value


@dataclass(frozen=True)
class AggregateState:
    partial: exp.Select  # input rows -> rows per group (and per DISTINCT values, when there are any)
    keys: tuple[str, ...]  # state columns naming a group
    values: tuple[StateColumn, ...]  # state columns merged by their aggregate
    final: exp.Select  # state rows, one per group (relation STATE) -> the model's columns, in order
    distinct: tuple[str, ...] = ()  # the DISTINCT arguments' columns of the partial rows (the set's besides keys)
    tallies: tuple[Tally, ...] = ()  # state columns of the DISTINCT aggregates

    def columns(self) -> list[str]:
        """The state's columns, in the order its rows have them (keys, values, DISTINCT tallies)."""
        return [*self.keys, *(v.name for v in self.values), *(t.name for t in self.tallies)]

    def projection(self) -> list[str] | None:
        """When the final query only names state columns, each once and no other (no ``HAVING``): the
        state column of each model column, in order. The model's rows are then its state, one row per
        group, under other names, so the model's table can keep it (see :mod:`.table_state`)."""
        cols = [e.unalias() for e in self.final.expressions]
        if self.final.args.get("where") is not None or \
                not all(isinstance(c, exp.Column) and not c.table for c in cols):
            return None
        names = [c.name for c in cols]
        return names if sorted(names) == sorted(self.columns()) and len(set(names)) == len(names) else None

    def final_sql(self, state: str, names: list[str]) -> str:
        """The final query reading ``state``, its columns named ``names`` (the model's own names)."""
        final = self.final.copy()
        final.set("from_", exp.From(this=exp.to_table(f"`{state}`", dialect="spark")))
        final.set("expressions", [exp.alias_(e.unalias(), exp.to_identifier(n, quoted=True))
                                  for e, n in zip(final.expressions, names, strict=True)])
        return final.sql(dialect="spark")


def _col(name: str) -> exp.Column:
    return exp.column(exp.to_identifier(name, quoted=True))


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _distinct_args(node: exp.Expr) -> list[exp.Expr] | None:
    inner = node.this if isinstance(node, exp.Expr) else None
    return list(inner.expressions) if isinstance(inner, exp.Distinct) else None


class _Builder:
    def __init__(self, select: exp.Select) -> None:
        self.select = select
        self.keys: list[tuple[str, exp.Expr]] = []  # (state column, group expression)
        self.distinct: list[tuple[str, exp.Expr]] = []
        self.partials: list[tuple[str, exp.Expr, str]] = []  # (state column, partial aggregate, merge)
        self.finals: dict[str, exp.Expr] = {}  # aggregate unit SQL -> its expression over state rows
        self.counts: set[str] = set()  # partial columns that count rows
        self.tallies: list[Tally] = []  # state columns of DISTINCT aggregates

    def group_keys(self) -> str | None:
        group = self.select.args.get("group")
        exprs = list(group.expressions) if group is not None else []
        if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals")):
            return "GROUPING SETS, ROLLUP or CUBE"
        aliases = {p.alias for p in self.select.expressions if isinstance(p, exp.Alias)
                   and not (isinstance(p.this, exp.Column) and p.this.name == p.alias)}
        for i, g in enumerate(exprs):
            if isinstance(g, exp.Rollup | exp.Cube | exp.GroupingSets):
                return "GROUPING SETS, ROLLUP or CUBE"
            if isinstance(g, exp.Literal) and not g.is_string:  # GROUP BY 2
                position = int(g.name)
                if not 0 < position <= len(self.select.expressions):
                    return f"GROUP BY {position} names no column"
                g = self.select.expressions[position - 1].unalias()
            if isinstance(g, exp.Column) and not g.table and g.name in aliases:
                return f"GROUP BY {g.name}, a name of the SELECT list"
            if isinstance(g, exp.Anonymous) and func_name(g) in ("SESSION_WINDOW", "SESSION"):
                return "a session window (new rows can merge sessions)"
            if isinstance(g, exp.Column):
                name = g.name
            elif isinstance(g, exp.Anonymous) and func_name(g) in _GROUP_WINDOWS:
                name = _GROUP_WINDOWS[func_name(g)]
            else:
                name = f"_streamt_k{i}"
            if any(name == n for n, _ in self.keys):
                return f"two grouping keys named {name}"
            self.keys.append((name, g.copy()))
        return None

    def aggregate(self, node: exp.Expr) -> str | None:
        unit = node.parent if isinstance(node.parent, exp.Filter) else node
        text = unit.sql(dialect="spark")
        if text in self.finals:
            return None

        def partial(agg: exp.Expr, merge: str) -> exp.Expr:
            name = f"_streamt_a{len(self.partials)}"
            whole = agg
            if unit is not node:  # the aggregate keeps its FILTER (WHERE ...)
                whole = unit.copy()
                whole.set("this", agg)
            self.partials.append((name, whole, merge))
            return _col(name)

        distinct = _distinct_args(node)
        if distinct is not None and not isinstance(node, exp.Min | exp.Max):
            if unit is not node:
                return f"{func_name(node).lower()}(DISTINCT ...) with FILTER"
            why = self._distinct(distinct)
            if why:
                return why
            if isinstance(node, exp.Count):
                self.finals[text] = self._tally("count")
            elif isinstance(node, exp.Sum) and len(self.distinct) == 1:
                self.finals[text] = self._tally("sum")
            elif isinstance(node, exp.Avg) and len(self.distinct) == 1:
                self.finals[text] = _fn("try_divide", self._tally("sum"), self._tally("count"))
            else:
                return f"{func_name(node).lower()}(DISTINCT ...) cannot be merged"
            return None
        if isinstance(node, exp.Avg):
            arg = node.this.copy()
            total = partial(exp.Sum(this=exp.Cast(this=arg, to=exp.DataType.build("double"))), "sum")
            count = partial(exp.Count(this=arg.copy()), "sum")
            self.counts.add(count.name)
            self.finals[text] = _fn("try_divide", total, count)
            return None
        anonymous = _ANONYMOUS_MERGE.get(func_name(node)) if isinstance(node, exp.Anonymous) else None
        merge = _MERGE.get(type(node)) or anonymous
        if merge is None:
            spelled = node.sql(dialect="spark").split("(", 1)[0].lower()  # as the user wrote it
            return f"aggregate {spelled}() cannot be merged"
        self.finals[text] = partial(node.copy(), merge)
        if isinstance(node, exp.Count | exp.CountIf):
            self.counts.add(self.partials[-1][0])
        return None

    def _tally(self, kind: str) -> exp.Column:
        name = f"_streamt_t{len(self.tallies)}"
        self.tallies.append(Tally(name, kind))
        return _col(name)

    def _distinct(self, args: list[exp.Expr]) -> str | None:
        if self.distinct:
            if [e.sql(dialect="spark") for _, e in self.distinct] != [a.sql(dialect="spark") for a in args]:
                return "DISTINCT aggregates over different columns"
            return None
        self.distinct = [(f"_streamt_d{i}", a.copy()) for i, a in enumerate(args)]
        return None

    def rewrite(self, expr: exp.Expr) -> exp.Expr | str:
        """``expr`` over state rows (one per group)."""
        keys = {k.sql(dialect="spark"): name for name, k in self.keys}
        columns = {name for name, k in self.keys if isinstance(k, exp.Column)}
        structs = {name for name, k in self.keys if not isinstance(k, exp.Column) and not name.startswith("_")}
        # a global aggregate of no rows keeps no group: its counts come back NULL from the state's merge
        zero = set(self.counts) if self.distinct and not self.keys else set()

        def replace(node: exp.Expr) -> exp.Expr:  # pre-order: a replaced node's children are not visited
            if isinstance(node, exp.Filter | exp.AggFunc | exp.Anonymous | exp.Any):
                final = self.finals.get(node.sql(dialect="spark"))
                if final is not None:
                    return final.copy().transform(
                        lambda n: exp.Coalesce(this=n.copy(), expressions=[exp.Literal.number(0)])
                        if isinstance(n, exp.Column) and n.name in zero else n)
            key = keys.get(node.sql(dialect="spark"))
            if key is not None:
                return _col(key)
            if isinstance(node, exp.Column) and node.name in columns and not (node.table and node.table in structs):
                return _col(node.name)
            return node

        out = expr.copy().transform(replace)
        state_columns = {n for n, _ in self.keys} | {n for n, _, _ in self.partials} | {t.name for t in self.tallies}
        for column in out.find_all(exp.Column):
            if column.table in structs:
                continue
            if column.table or column.name not in state_columns:
                return f"column {column.sql(dialect='spark')} is neither grouped nor aggregated"
        return out


def aggregate_state(tree: exp.Query) -> AggregateState | str:
    """The state split of an aggregation query, or why it has none."""
    if not isinstance(tree, exp.Select):
        return "a set operation at the top of the query"
    select = tree
    if not aggregates_at(select):
        return "the query does not aggregate"
    if select.args.get("distinct") is not None:
        return "SELECT DISTINCT over an aggregation"
    for key, what in (("order", "ORDER BY"), ("limit", "LIMIT"), ("offset", "OFFSET"), ("qualify", "QUALIFY"),
                      ("sort", "SORT BY"), ("cluster", "CLUSTER BY"), ("distribute", "DISTRIBUTE BY"),
                      ("windows", "a WINDOW clause"), ("pivots", "PIVOT")):
        if select.args.get(key):
            return f"{what} on top of the aggregation"
    if any(w.find_ancestor(exp.Select) is select for w in select.find_all(exp.Window)):
        return "a window function (OVER)"
    b = _Builder(select)
    why = b.group_keys()
    for node in aggregate_calls(select) if why is None else ():
        why = b.aggregate(node)
        if why:
            break
    if why:
        return why
    projections: list[exp.Expr] = []
    for p in select.expressions:
        out = b.rewrite(p)
        if isinstance(out, str):
            return out
        projections.append(out)
    final = exp.Select(expressions=projections)
    having = select.args.get("having")
    if having is not None:
        cond = b.rewrite(having.this)
        if isinstance(cond, str):
            return cond
        final.set("where", exp.Where(this=cond))
    partial = select.copy()
    partial.set("expressions", [exp.alias_(e.copy(), exp.to_identifier(n, quoted=True))
                                for n, e in (*b.keys, *b.distinct)] +
                [exp.alias_(e, exp.to_identifier(n, quoted=True)) for n, e, _ in b.partials])
    group = [e.copy() for _, e in (*b.keys, *b.distinct)]
    partial.set("group", exp.Group(expressions=group) if group else None)
    partial.set("having", None)
    return AggregateState(partial, tuple(n for n, _ in b.keys), tuple(StateColumn(n, m) for n, _, m in b.partials),
                          final, tuple(n for n, _ in b.distinct), tuple(b.tallies))
