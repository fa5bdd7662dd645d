"""Which inputs of a query may grow by appended rows without a full recompute, read from its tree.

A table model can be refreshed from only the rows appended to one input when the query is
*monotone* in that input along its whole path to the output: rows it read before keep producing
exactly the rows they produced, and the new rows produce new output rows of their own. That holds
for selections, projections and inner joins; it fails on the null-supplying side of an outer join
(a new match replaces a null-padded row), on the filter side of a semi/anti join, inside a subquery
expression, under DISTINCT, window functions, LIMIT or a set operation, and when the input is read
twice (a self-join). An aggregation is monotone only at the top of the query, where its state can
be merged (:mod:`.aggregate_state`).

Anything that makes the result depend on when it runs (``rand()``, ``current_timestamp()``) rules
out every shortcut, a skipped refresh of unchanged inputs included.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

from sqlglot import exp

# functions whose value changes from one run to the next (sqlglot classes, then names it leaves anonymous)
_VOLATILE_CLASSES: tuple[type[exp.Expr], ...] = (
    exp.Rand, exp.Randn, exp.Randstr, exp.Shuffle, exp.Uuid, exp.CurrentDate, exp.CurrentDatetime, exp.CurrentTime,
    exp.CurrentTimestamp, exp.CurrentTimestampLTZ, exp.Localtimestamp, exp.Localtime)
_VOLATILE_NAMES = frozenset({
    "RAND", "RANDN", "RANDOM", "UNIFORM", "RANDSTR", "SHUFFLE", "UUID", "NOW", "CURDATE", "CURRENT_DATE",
    "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "MONOTONICALLY_INCREASING_ID", "SPARK_PARTITION_ID", "REFLECT",
    "JAVA_METHOD", "TRY_REFLECT", "INPUT_FILE_BLOCK_START", "INPUT_FILE_BLOCK_LENGTH"})
_NO_ARG_NOW = (exp.StrToUnix, exp.TimeStrToUnix, exp.TimeToUnix)  # unix_timestamp() without arguments


def volatile(tree: exp.Expr) -> str | None:
    """The first function that makes the query's result depend on when it runs, or None."""
    for node in tree.find_all(exp.Func):
        if isinstance(node, _VOLATILE_CLASSES):
            return node.sql_name().lower()
        if isinstance(node, _NO_ARG_NOW) and node.this is None:
            return "unix_timestamp"
        if isinstance(node, exp.Anonymous) and str(node.this).upper() in _VOLATILE_NAMES:
            return str(node.this).lower()
    return None


def func_name(node: exp.Expr) -> str:
    """A function call's name in upper case, as written for one sqlglot leaves anonymous."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    return node.sql_name().upper() if isinstance(node, exp.Func) else type(node).__name__.upper()


def cte_names(tree: exp.Expr) -> frozenset[str]:
    return frozenset(cte.alias_or_name for cte in tree.find_all(exp.CTE))


def relation_tables(tree: exp.Expr, relation: str) -> list[exp.Table]:
    """Table nodes that read ``relation`` (not a CTE of that name)."""
    ctes = cte_names(tree)
    return [t for t in tree.find_all(exp.Table) if t.name == relation and relation not in ctes]


# Spark's aggregate functions that sqlglot leaves anonymous (or parses as ANY)
SPARK_AGGREGATES = frozenset({
    "ANY", "ANY_VALUE", "APPROX_COUNT_DISTINCT", "APPROX_PERCENTILE", "ARRAY_AGG", "AVG", "BIT_AND", "BIT_OR",
    "BIT_XOR", "BITMAP_CONSTRUCT_AGG", "BITMAP_OR_AGG", "BOOL_AND", "BOOL_OR", "COLLECT_LIST", "COLLECT_SET",
    "CORR", "COUNT", "COUNT_IF", "COUNT_MIN_SKETCH", "COVAR_POP", "COVAR_SAMP", "EVERY", "FIRST", "FIRST_VALUE",
    "GROUPING", "GROUPING_ID", "HISTOGRAM_NUMERIC", "HLL_SKETCH_AGG", "HLL_UNION_AGG", "KURTOSIS", "LAST",
    "LAST_VALUE", "LISTAGG", "MAX", "MAX_BY", "MEAN", "MEDIAN", "MIN", "MIN_BY", "MODE", "PERCENTILE",
    "PERCENTILE_APPROX", "PERCENTILE_CONT", "PERCENTILE_DISC", "PRODUCT", "REGR_AVGX", "REGR_AVGY", "REGR_COUNT",
    "REGR_INTERCEPT", "REGR_R2", "REGR_SLOPE", "REGR_SXX", "REGR_SXY", "REGR_SYY", "SKEWNESS", "SOME", "STD",
    "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "STRING_AGG", "SUM", "THETA_SKETCH_AGG", "THETA_UNION_AGG", "TRY_AVG",
    "TRY_SUM", "VAR_POP", "VAR_SAMP", "VARIANCE", "KLL_SKETCH_AGG_BIGINT", "KLL_SKETCH_AGG_DOUBLE",
    "KLL_SKETCH_AGG_FLOAT"})


def is_aggregate(node: exp.Expr) -> bool:
    """An aggregate function call (one sqlglot types, or a Spark aggregate it leaves anonymous)."""
    if isinstance(node, exp.AggFunc):
        return True
    if isinstance(node, exp.Any):  # Spark's any(x) = bool_or(x); `x = ANY (subquery)` has a query inside
        return not isinstance(node.this, exp.Query | exp.Subquery)
    return isinstance(node, exp.Anonymous) and str(node.this).upper() in SPARK_AGGREGATES


def aggregate_calls(select: exp.Select) -> list[exp.Expr]:
    """The aggregate calls of ``select`` itself (not of its subqueries or OVER clauses), outermost
    first (an aggregate nested in another is an error Spark reports)."""
    found: list[exp.Expr] = []
    for part in (*select.expressions, select.args.get("having")):
        for node in part.find_all(exp.Func, exp.Any) if part is not None else ():
            if is_aggregate(node) and node.find_ancestor(exp.Window, exp.Select) is select and \
                    not any(a in found for a in _ancestors(node)):
                found.append(node)
    return found


def _ancestors(node: exp.Expr) -> Iterator[exp.Expr]:
    while node.parent is not None:
        node = node.parent
        yield node


def aggregates_at(select: exp.Select) -> bool:
    """Whether ``select`` itself aggregates (GROUP BY, or an aggregate function outside OVER)."""
    return select.args.get("group") is not None or bool(aggregate_calls(select))


def _select_blocker(select: exp.Select, root_aggregate: bool) -> str | None:
    """Why rows appended below ``select`` do not simply add rows above it."""
    if select.args.get("distinct") is not None:
        return "SELECT DISTINCT"
    for key, what in (("limit", "LIMIT"), ("offset", "OFFSET"), ("order", "ORDER BY"), ("qualify", "QUALIFY"),
                      ("sort", "SORT BY"), ("cluster", "CLUSTER BY"), ("distribute", "DISTRIBUTE BY"),
                      ("windows", "a WINDOW clause"), ("pivots", "PIVOT")):
        if select.args.get(key):
            return what
    if any(w.find_ancestor(exp.Select) is select for w in select.find_all(exp.Window)):
        return "a window function (OVER)"
    if aggregates_at(select) and not root_aggregate:
        return "an aggregation inside the query"
    return None


def _join_blocker(join: exp.Join, joined: bool) -> str | None:
    """Why appends to the joined relation (``joined``) or to the relations on its left break ``join``."""
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    if kind in ("SEMI", "ANTI"):
        return f"the right side of a LEFT {kind} JOIN" if joined else None
    if side == "FULL":
        return "a FULL OUTER JOIN"
    if side == "LEFT" and joined:
        return "the right side of a LEFT JOIN"
    if side == "RIGHT" and not joined:
        return "the left side of a RIGHT JOIN"
    return None


def _step(node: exp.Expr, parent: exp.Expr, root: exp.Expr, root_aggregate: bool) -> str | None:
    """Why appends to ``node``'s rows break at ``parent`` (``node`` is one of its children), or None."""
    if isinstance(parent, exp.Join):
        return _join_blocker(parent, True) if node.arg_key == "this" else "a join condition's subquery"
    if isinstance(parent, exp.Select):
        if node.arg_key == "from_":
            later = parent.args.get("joins") or []
        elif node.arg_key == "joins":
            joins = parent.args.get("joins") or []
            later = joins[joins.index(node) + 1:] if node in joins else []
        elif node.arg_key == "laterals":
            later = []
        else:
            return "a subquery expression (IN, EXISTS or a scalar subquery)"
        for join in later:
            why = _join_blocker(join, False)
            if why:
                return why
        return _select_blocker(parent, root_aggregate and parent is root)
    if isinstance(parent, exp.SetOperation):
        return "a set operation (UNION, INTERSECT, EXCEPT)"
    if isinstance(parent, exp.Table | exp.Lateral) and node.arg_key != "this":
        return "a nested join"
    if isinstance(parent, exp.Where | exp.Having | exp.In | exp.Exists):
        return "a subquery expression (IN, EXISTS or a scalar subquery)"
    return None


def _path_blocker(table: exp.Table, tree: exp.Expr, root_aggregate: bool, depth: int = 0) -> str | None:
    if table.args.get("sample") is not None:
        return "TABLESAMPLE"
    if table.args.get("version") is not None:
        return "the versioned side of a temporal join"
    node: exp.Expr = table
    while node is not tree:
        parent = node.parent
        if parent is None:
            break
        if isinstance(parent, exp.CTE):  # follow the one place the CTE is read
            if depth > 32:
                return "CTEs nested too deeply"
            refs = [t for t in tree.find_all(exp.Table) if t.name == parent.alias_or_name]
            if len(refs) != 1:
                return f"CTE {parent.alias_or_name} read {len(refs)} times"
            return _path_blocker(refs[0], tree, root_aggregate, depth + 1)
        if isinstance(parent, exp.With):
            node = parent
            continue
        why = _step(node, parent, tree, root_aggregate)
        if why:
            return why
        node = parent
    return None


def append_blockers(tree: exp.Query, relations: Collection[str], root_aggregate: bool = False) -> Mapping[str, str]:
    """relation -> why rows appended to it cannot be applied alone (relations not named are fine).

    ``root_aggregate``: the outermost SELECT may aggregate (its state is merged, not appended).

    >>> from dagster_streamt.sql import parse_query
    >>> q = parse_query("SELECT o.id, c.tier FROM orders o JOIN customers c ON o.cid = c.id").tree
    >>> dict(append_blockers(q, ["orders", "customers"]))
    {}
    >>> q = parse_query("SELECT o.id, c.tier FROM orders o LEFT JOIN customers c ON o.cid = c.id").tree
    >>> dict(append_blockers(q, ["orders", "customers"]))
    {'customers': 'the right side of a LEFT JOIN'}
    """
    out: dict[str, str] = {}
    for relation in relations:
        tables = relation_tables(tree, relation)
        if len(tables) > 1:
            out[relation] = f"{relation} is read {len(tables)} times"
            continue
        for table in tables:
            why = _path_blocker(table, tree, root_aggregate)
            if why:
                out[relation] = why
    return out


def rename_tables(tree: exp.Expr, mapping: Mapping[str, str]) -> exp.Expr:
    """A copy of ``tree`` reading ``mapping[name]`` wherever it read relation ``name`` (CTEs untouched);
    an unaliased table keeps its old name as alias so qualified columns still resolve."""
    work = tree.copy()
    ctes = cte_names(work)
    for table in list(work.find_all(exp.Table)):
        new = mapping.get(table.name)
        if new is None or table.name in ctes:
            continue
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)))
        table.set("this", exp.to_identifier(new, quoted=True))
        table.set("db", None)
        table.set("catalog", None)
    return work
