"""How two versions of a model's query differ, read from their trees (sqlglot), not their text: a
reformatted query is the same query, an added output column is not a changed filter.

:func:`compare` says whether the new query only adds output columns (its other columns and every
clause as before: existing rows keep their values), which columns it removed or computes differently,
which clauses changed, and whether the state a stream keeps (group keys, windows, aggregations, joins)
changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from ..sql.appends import func_name
from ..sql.parse import DIALECT, parse_query

CLAUSES = (("where", "filter"), ("group", "GROUP BY"), ("having", "HAVING"), ("joins", "joins"),
           ("from_", "FROM"), ("qualify", "QUALIFY"), ("order", "ORDER BY"), ("limit", "LIMIT"),
           ("with_", "WITH (CTEs)"), ("distinct", "DISTINCT"))
AGGREGATES = (exp.AggFunc,)
WINDOW_FUNCS = frozenset({"TUMBLE", "HOP", "SESSION", "CUMULATE", "WINDOW", "SESSION_WINDOW", "TUMBLE_END",
                          "TUMBLE_START", "HOP_END", "HOP_START", "SESSION_END", "SESSION_START"})


@dataclass(frozen=True)
class QueryDiff:
    same: bool  # the same query, as trees
    only_added: bool  # every old output column and clause as before; new output columns only
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed_columns: tuple[str, ...] = ()  # computed differently
    clauses: tuple[str, ...] = ()  # "filter: WHERE a > 1 -> WHERE a > 2"
    state: tuple[str, ...] = field(default=())  # what a stream's state depends on and changed


def _sql(node: exp.Expr | None) -> str:
    return "" if node is None else node.sql(dialect=DIALECT)


KEYWORDS = ("WITH ", "FROM ", "WHERE ", "GROUP BY ", "HAVING ", "QUALIFY ", "ORDER BY ", "LIMIT ")


def _clause(node: exp.Expr | list[exp.Expr] | None) -> str:
    """A clause as SQL without its keyword (the label says which clause it is)."""
    if isinstance(node, list):
        return ", ".join(_sql(n) for n in node)
    text = _sql(node)
    return next((text[len(k):] for k in KEYWORDS if text.upper().startswith(k)), text)


def _columns(select: exp.Select) -> dict[str, str]:
    return {e.alias_or_name: _sql(e.unalias() if isinstance(e, exp.Alias) else e) for e in select.selects}


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _state(tree: exp.Expr) -> dict[str, list[str]]:
    """What a stream's state is keyed by and holds: group keys, windows, aggregate calls, join conditions."""
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    group = select.args.get("group") if select is not None else None
    windows = sorted({_sql(f) for f in tree.find_all(exp.Anonymous, exp.Func) if func_name(f) in WINDOW_FUNCS})
    return {"group keys": sorted(_sql(g) for g in (group.expressions if group is not None else [])),
            "windows": windows,
            "aggregations": sorted({_sql(a) for a in tree.find_all(*AGGREGATES)}),
            "joins": sorted(_sql(j) for j in tree.find_all(exp.Join))}


def compare(old_sql: str | None, new_sql: str | None) -> QueryDiff:
    """The difference between two rendered queries (either None: a sink without SQL)."""
    if old_sql == new_sql:
        return QueryDiff(same=True, only_added=True)
    old = parse_query(old_sql).tree if old_sql else None
    new = parse_query(new_sql).tree if new_sql else None
    if old is None or new is None:  # unparsable or SQL added/removed: every row may change
        return QueryDiff(same=False, only_added=False, clauses=("the query changed",))
    if _sql(old) == _sql(new):
        return QueryDiff(same=True, only_added=True)
    was, now = _state(old), _state(new)
    if set(was["windows"]) <= set(was["group keys"]) and set(now["windows"]) <= set(now["group keys"]):
        del was["windows"], now["windows"]  # a window in GROUP BY: said once, as a group key
    state = tuple(f"{what}: {_short(', '.join(before)) or 'none'} -> {_short(', '.join(after)) or 'none'}"
                  for (what, before), after in zip(was.items(), now.values(), strict=True) if before != after)
    if not isinstance(old, exp.Select) or not isinstance(new, exp.Select):  # set operations: as a whole
        return QueryDiff(same=False, only_added=False, clauses=("the query changed",), state=state)
    before, after = _columns(old), _columns(new)
    added = tuple(c for c in after if c not in before)
    removed = tuple(c for c in before if c not in after)
    changed = tuple(c for c in before if c in after and before[c] != after[c])
    clauses = []
    for arg, label in CLAUSES:
        a, b = _clause(old.args.get(arg)), _clause(new.args.get(arg))
        if a != b:
            clauses.append(f"{label}: {_short(a) or 'none'} -> {_short(b) or 'none'}")
    # only columns added: the new query without them is the old one (same clauses, same expressions)
    trimmed = new.copy()
    trimmed.set("expressions", [e for e in trimmed.selects if e.alias_or_name not in added])
    only_added = bool(added) and not removed and not changed and _sql(trimmed) == _sql(old)
    return QueryDiff(same=False, only_added=only_added, added=added, removed=removed, changed_columns=changed,
                     clauses=tuple(clauses), state=state)
