"""How a table model's query can be refreshed after its inputs change, read from its SQL alone.

* ``append``: a selection/projection/join: the rows of the query over an input's appended rows are
  exactly the rows to add (:mod:`.appends`).
* ``aggregate``: an aggregation at the top over such a query: its state merges with the state of
  the appended rows (:mod:`.aggregate_state`).
* ``recompute``: anything else that gives the same rows for the same inputs: recomputed in full when
  an input changed, skipped when none did.
* ``volatile``: the result depends on when it runs (``rand()``, ``current_timestamp()``) or the SQL
  could not be analyzed: always recomputed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

from sqlglot import exp

from .aggregate_state import AggregateState, aggregate_state
from .appends import aggregates_at, append_blockers, cte_names, relation_tables, rename_tables, volatile
from .parse import parse_query

Kind = Literal["append", "aggregate", "recompute", "volatile"]


@dataclass(frozen=True)
class IncrementalPlan:
    kind: Kind
    reason: str = ""  # why the query is recomputed (recompute, volatile)
    blockers: Mapping[str, str] = field(default_factory=dict)  # relation -> why its appends need a recompute
    state: AggregateState | None = None  # aggregate plans

    def delta_sql(self, renames: Mapping[str, str]) -> str:
        """An aggregate plan's partial query over the relations ``renames`` maps (the rest as named)."""
        assert self.state is not None
        return rename_tables(self.state.partial, renames).sql(dialect="spark")


def incremental_plan(sql: str, relations: Collection[str], itself: str | None = None) -> IncrementalPlan:
    """The plan for ``sql`` (rendered: its inputs are the temporary views named in ``relations``;
    ``itself``: the name the model's own table has in it, ``{{ this }}``).

    >>> incremental_plan("SELECT id, amount FROM orders WHERE amount > 0", ["orders"]).kind
    'append'
    >>> incremental_plan("SELECT k, count(*) AS n FROM orders GROUP BY k", ["orders"]).kind
    'aggregate'
    >>> incremental_plan("SELECT *, rand() AS r FROM orders", ["orders"]).reason
    'it calls rand(), whose value changes from run to run'
    """
    parsed = parse_query(sql)
    if parsed.tree is None:
        return IncrementalPlan("volatile", f"its SQL could not be analyzed ({parsed.error})")
    tree = parsed.tree
    fn = volatile(tree)
    if fn is not None:
        return IncrementalPlan("volatile", f"it calls {fn}(), whose value changes from run to run")
    if itself is not None and relation_tables(tree, itself):
        return IncrementalPlan("volatile", "it reads its own previous rows ({{ this }})")
    shadowed = sorted(cte_names(tree) & set(relations))
    if shadowed:  # which `orders` a reference means depends on where it stands: rebuild, never guess
        return IncrementalPlan("recompute", f"a CTE named like its input {shadowed[0]}")
    if isinstance(tree, exp.Select) and aggregates_at(tree):
        state = aggregate_state(tree)
        if isinstance(state, str):
            return IncrementalPlan("recompute", state)
        return IncrementalPlan("aggregate", blockers=append_blockers(tree, relations, root_aggregate=True),
                               state=state)
    return IncrementalPlan("append", blockers=append_blockers(tree, relations))
