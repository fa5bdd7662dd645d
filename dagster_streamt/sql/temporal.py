"""Temporal joins (``JOIN dim FOR SYSTEM_TIME AS OF o.ts AS d ON o.k = d.id``) as Flink means them: each
row meets the version of ``dim`` valid at its time, i.e. the latest row of its key at or before ``o.ts``.

Spark has no versioned tables; the versioned side is read as a table (static, in batch) with each
version's validity end (the next version's time for its key), and the join keeps the version whose
validity holds ``o.ts``. Its key is what the ON clause equates it with (Flink's primary key of ``dim``),
its time the event time the source or model declares. Without a known time column the join reads the
current version, with a note saying so.
"""

from __future__ import annotations

from sqlglot import exp

VALID_TO = "__streamt_valid_to"


def _side_columns(on: exp.Expr | None, alias: str) -> list[exp.Column]:
    """Columns of the versioned side (``alias``) that the ON clause equates with the other side."""
    keys: list[exp.Column] = []
    for eq in (on.find_all(exp.EQ) if on is not None else []):
        for mine, other in ((eq.this, eq.expression), (eq.expression, eq.this)):
            if isinstance(mine, exp.Column) and mine.table == alias and not (
                    isinstance(other, exp.Column) and other.table == alias):
                keys.append(exp.column(mine.name))
    return keys


def as_of_join(version: exp.Version, time_column: str | None) -> str | None:
    """Rewrite the join holding ``version`` in place; return a note when it can only join the current version."""
    table = version.find_ancestor(exp.Table)
    join = version.find_ancestor(exp.Join)
    version.pop()
    if table is None:
        return None
    name = table.name
    alias = table.alias_or_name
    probe = version.args.get("expression")
    keys = _side_columns(join.args.get("on") if join is not None else None, alias)
    if time_column is None or join is None or probe is None or not keys:
        return (f"temporal join on {name}: Spark joins the current version of {name} (read when the micro-batch "
                f"runs), not the version as of each row's time" + ("" if time_column else
                                                                   f"; give {name} an event_time to join as of it"))
    ts = exp.column(time_column)
    valid_to = exp.Window(this=exp.func("LEAD", ts.copy()), partition_by=keys,
                          order=exp.Order(expressions=[exp.Ordered(this=ts.copy())]))
    inner = exp.select(exp.Star(), exp.alias_(valid_to, VALID_TO)).from_(exp.Table(
        this=table.this.copy(), db=table.args.get("db"), catalog=table.args.get("catalog")))
    table.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias))))
    mine = exp.column(time_column, table=alias)
    until = exp.column(VALID_TO, table=alias)
    valid = exp.and_(exp.LTE(this=mine, expression=probe.copy()), exp.paren(exp.or_(
        exp.Is(this=until, expression=exp.Null()), exp.LT(this=probe.copy(), expression=until.copy()))))
    on = join.args.get("on")
    join.set("on", exp.and_(on, valid) if on is not None else valid)
    _hide(join.find_ancestor(exp.Select), alias)
    return None


def _hide(select: exp.Select | None, alias: str) -> None:
    """Keep the validity column out of the query's ``*`` and ``alias.*`` (Spark's ``* EXCEPT``)."""
    for projection in select.expressions if select is not None else []:
        if isinstance(projection, exp.Star):
            projection.set("except_", [*(projection.args.get("except_") or []), exp.column(VALID_TO, table=alias)])
        elif isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star) \
                and projection.table == alias:
            star = projection.this
            star.set("except_", [*(star.args.get("except_") or []), exp.column(VALID_TO)])
