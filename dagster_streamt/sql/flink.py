"""Flink SQL as Spark SQL: the translation every streamt model goes through before Spark runs it.

It works on the tree the front end parsed (never on text) and only when the query uses a Flink
construct; any other query runs exactly as written. What changes:

- group windows ``TUMBLE/HOP/SESSION(ts, INTERVAL ...)`` in GROUP BY become ``window(ts, ...)`` /
  ``session_window(ts, ...)``, and ``TUMBLE_START/_END/_ROWTIME`` (HOP_, SESSION_) their fields;
- window table functions ``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...))`` (and HOP, CUMULATE) become a
  subquery adding the window, with ``window_start``, ``window_end``, ``window_time`` read from it;
- temporal joins ``FOR SYSTEM_TIME AS OF`` join the version valid at the row's time (:mod:`.temporal`);
- Flink's integer arithmetic, ``FLOOR/CEIL(ts TO unit)`` and ``TIMESTAMP(p)`` casts (:mod:`.flink_types`);
- ``PROCTIME()`` is the processing time; ``CURRENT_WATERMARK`` has no Spark equivalent (an error).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from .flink_types import Catalog, rewrite
from .normalize import TVF_NAMES
from .temporal import as_of_join
from .translation_error import TranslationError

GROUP_WINDOWS = {"TUMBLE": "window", "HOP": "window", "SESSION": "session_window"}
_PROPS = {"START": "start", "END": "end", "ROWTIME": "rowtime", "PROCTIME": "rowtime"}
WINDOW_COLUMN = "__streamt_window"
CUMULATE_END = "__streamt_cumulate_end"
_UNITS = {"MILLISECOND": "milliseconds", "SECOND": "seconds", "MINUTE": "minutes", "HOUR": "hours",
          "DAY": "days", "WEEK": "weeks", "MONTH": "months", "YEAR": "years"}
NO_SPARK = {"CURRENT_WATERMARK": "Spark SQL cannot read the watermark; late rows are already dropped by "
                                 "stateful operators once they are older than it (the source's event_time)"}


@dataclass(frozen=True)
class Translation:
    sql: str | None  # Spark SQL; None when the query runs as written
    notes: tuple[str, ...] = ()
    window_columns: tuple[str, ...] = ()  # event-time columns of windows and interval joins (for watermarks)
    static_tables: tuple[str, ...] = ()  # the versioned side of temporal joins: read as of now, not streamed


@dataclass
class _State:
    changed: bool = False
    notes: list[str] = field(default_factory=list)
    windows: list[str] = field(default_factory=list)
    static: list[str] = field(default_factory=list)


def interval_text(node: exp.Expr) -> str:
    """``INTERVAL '5' MINUTE`` -> ``'5 minutes'`` (Spark's window duration strings)."""
    if isinstance(node, exp.Interval):
        value = node.this.name if isinstance(node.this, exp.Literal) else node.this.sql("spark")
        unit = node.unit.name.upper() if node.unit is not None else ""
        unit = unit[:-1] if unit.endswith("S") and unit[:-1] in _UNITS else unit
        if unit in _UNITS:
            return f"{value.strip()} {_UNITS[unit]}"
        if not unit and isinstance(node.this, exp.Literal):
            return str(node.this.name)  # INTERVAL '5 minutes'
        raise TranslationError("INTERVAL", f"cannot read the interval {node.sql('spark')}; write INTERVAL '5' MINUTE")
    if isinstance(node, exp.Literal) and node.is_string:
        return node.name
    raise TranslationError("window size", f"a window size must be an INTERVAL, got {node.sql('spark')}")


def _duration(node: exp.Expr) -> exp.Literal:
    return exp.Literal.string(interval_text(node))


def _name(node: exp.Expr) -> str:
    return str(node.this).upper() if isinstance(node, exp.Anonymous) else ""


def _call(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _field(struct: str, prop: str) -> exp.Expr:
    col = exp.column(prop if prop != "rowtime" else "end", table=struct)
    if prop == "rowtime":  # Flink's rowtime is the last millisecond of the window
        return exp.Sub(this=col, expression=exp.Interval(this=exp.Literal.string("1"), unit=exp.var("MILLISECOND")))
    return col


def _group_window(select: exp.Select, state: _State) -> None:
    group = select.args.get("group")
    if group is None:
        return
    found: tuple[str, exp.Expr] | None = None
    for item in list(group.expressions):
        name = _name(item)
        if name not in GROUP_WINDOWS:
            continue
        args = item.expressions
        if name == "HOP":  # HOP(ts, slide, size) -> window(ts, size, slide)
            spark = _call("window", args[0], _duration(args[2]), _duration(args[1]))
        else:
            spark = _call(GROUP_WINDOWS[name], args[0], _duration(args[1]))
        item.replace(spark)
        found = (GROUP_WINDOWS[name], args[0])
        state.windows.append(args[0].name if isinstance(args[0], exp.Column) else args[0].sql("spark"))
        state.changed = True
    if found is None:
        return
    struct = found[0]
    for call in list(select.find_all(exp.Anonymous)):
        kind, _, prop = _name(call).partition("_")
        if kind in GROUP_WINDOWS and prop in _PROPS:
            call.replace(_field(struct, _PROPS[prop]))


def _tvf(table: exp.Table, state: _State) -> None:
    call = table.this
    name = _name(call)
    args = [a.expression if isinstance(a, exp.Kwarg) else a for a in call.expressions]
    if len(args) < 3:
        raise TranslationError(name, f"{name} takes (TABLE t, DESCRIPTOR(time column), size...)")
    data, descriptor, sizes = args[0], args[1], args[2:]
    if _name(descriptor) != "DESCRIPTOR" or not descriptor.expressions:
        raise TranslationError(name, f"{name} needs DESCRIPTOR(time column) as its second argument")
    ts = descriptor.expressions[0]
    relation = exp.Table(this=data.this.copy(), db=data.args.get("table")) if isinstance(data, exp.Column) else data
    # the Spark window and which sizes it takes: HOP(TABLE t, DESCRIPTOR(ts), slide, size) is window(ts, size,
    # slide); CUMULATE(TABLE t, DESCRIPTOR(ts), step, max size) a window of the max size, cut into steps below
    func, picks = {"SESSION": ("session_window", (0,)), "HOP": ("window", (1, 0)),
                   "CUMULATE": ("window", (1,))}.get(name, ("window", (0,)))
    window = _call(func, ts.copy(), *(_duration(sizes[i]) for i in picks))
    inner = exp.select(exp.Star(), exp.alias_(window, WINDOW_COLUMN)).from_(relation)
    end: exp.Expr = exp.column("end", table=WINDOW_COLUMN)
    if name == "CUMULATE":  # each row is in every cumulative window of its base window that ends after it
        count, unit = interval_text(sizes[0]).split()
        step = exp.Interval(this=exp.Literal.string(count), unit=exp.var(unit.upper().rstrip("S")))
        ends = exp.func("sequence", exp.Add(this=exp.column("start", table=WINDOW_COLUMN), expression=step),
                        exp.column("end", table=WINDOW_COLUMN), step.copy())
        after = exp.Lambda(this=exp.GT(this=exp.column("e"), expression=ts.copy()),
                           expressions=[exp.to_identifier("e")])
        base = exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("__streamt_base")))
        inner = exp.select(exp.Star(), exp.alias_(exp.func("explode", exp.func("filter", ends, after)),
                                                  CUMULATE_END)).from_(base)
        end = exp.column(CUMULATE_END)
    alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(relation.name or "w"))
    subquery = exp.Subquery(this=inner, alias=alias)
    table.replace(subquery)
    state.windows.append(ts.name if isinstance(ts, exp.Column) else ts.sql("spark"))
    state.changed = True
    outer = subquery.find_ancestor(exp.Select)
    if outer is not None:
        _tvf_columns(outer, end)


def _tvf_columns(select: exp.Select, end: exp.Expr) -> None:
    """In the query over a window TVF: ``window_start``/``window_end``/``window_time`` read the window,
    and grouping by them groups by the window itself (so Spark sees an event-time window)."""
    fields = {"window_start": exp.column("start", table=WINDOW_COLUMN), "window_end": end,
              "window_time": exp.Sub(this=end.copy(), expression=exp.Interval(
                  this=exp.Literal.string("1"), unit=exp.var("MILLISECOND")))}
    group = select.args.get("group")
    if group is not None:
        keep = [g for g in group.expressions if not (isinstance(g, exp.Column) and g.name.lower() in fields)]
        if len(keep) != len(group.expressions):
            extra = [exp.column(CUMULATE_END)] if isinstance(end, exp.Column) and end.name == CUMULATE_END else []
            group.set("expressions", [*keep, exp.column(WINDOW_COLUMN), *extra])
    for col in list(select.find_all(exp.Column)):
        target = fields.get(col.name.lower())
        if target is None or col.find_ancestor(exp.Subquery, exp.Select) is not select:
            continue
        replacement = target.copy()
        if col.parent is select:  # a bare projection keeps its name
            replacement = exp.alias_(replacement, col.name)
        col.replace(replacement)


def _temporal_joins(tree: exp.Expr, state: _State, catalog: Catalog) -> None:
    for version in list(tree.find_all(exp.Version)):
        table = version.find_ancestor(exp.Table)
        if table is not None:
            state.static.append(table.name)
        note = as_of_join(version, catalog.event_times.get(table.name) if table is not None else None)
        state.changed = True
        if note:
            state.notes.append(note)


def _functions(tree: exp.Expr, state: _State, streaming: bool) -> None:
    for call in list(tree.find_all(exp.Anonymous)):
        name = _name(call)
        if name in NO_SPARK:
            raise TranslationError(name, f"{name} has no Spark equivalent: {NO_SPARK[name]}")
        if name == "PROCTIME":
            call.replace(exp.CurrentTimestamp())
            state.changed = True
        elif name == "SPLIT_INDEX" and len(call.expressions) == 3:  # 0-based, NULL past the last part
            text, sep, index = call.expressions  # sqlglot quotes a literal separator for split's regex
            one = exp.Add(this=index.copy(), expression=exp.Literal.number(1))
            call.replace(exp.Anonymous(this="try_element_at", expressions=[
                exp.func("split", text.copy(), sep.copy()), one]))
            state.changed = True
        elif name == "COLLECT" and call.expressions:  # Flink's multiset of a group's values
            arg = call.expressions[0]
            distinct = isinstance(arg, exp.Distinct)
            inner = arg.expressions[0] if distinct else arg
            call.replace(exp.func("collect_set" if distinct else "collect_list", inner.copy()))
            state.changed = True
    for week in list(tree.find_all(exp.Week)):  # Flink's WEEK is the ISO week of the year
        week.replace(exp.Anonymous(this="weekofyear", expressions=[week.this.copy()]))
        state.changed = True
    if not streaming:
        return
    for agg in list(tree.find_all(exp.GroupConcat)):  # LISTAGG(DISTINCT x): streams have no distinct aggregation
        if isinstance(agg.this, exp.Distinct) and agg.find_ancestor(exp.Window) is None:
            sep = agg.args.get("separator") or exp.Literal.string(",")
            agg.replace(exp.func("array_join", exp.func("collect_set", agg.this.expressions[0].copy()), sep.copy()))
            state.changed = True
    for count in list(tree.find_all(exp.Count)):
        arg = count.this
        if isinstance(arg, exp.Distinct) and count.find_ancestor(exp.Window) is None:
            # Spark streams have no distinct aggregation; the size of the set of values is the same count
            values = arg.expressions
            value = values[0].copy() if len(values) == 1 else exp.If(
                this=exp.and_(*[exp.Not(this=exp.Is(this=v.copy(), expression=exp.Null())) for v in values]),
                true=exp.func("struct", *[v.copy() for v in values]))
            count.replace(exp.func("size", exp.func("collect_set", value)))
            state.changed = True


def _interval_join_columns(tree: exp.Expr, state: _State) -> None:
    """The time columns an interval join compares (``a.ts BETWEEN b.ts - INTERVAL ...``): both sides need
    a watermark for Spark to bound the join's state."""
    for select in tree.find_all(exp.Select):
        if not select.args.get("joins"):
            continue
        conditions = [j.args.get("on") for j in select.args["joins"]] + [select.args.get("where")]
        for cond in conditions:
            for node in (cond.find_all(exp.Between, exp.GT, exp.GTE, exp.LT, exp.LTE) if cond is not None else []):
                if node.find(exp.Interval) is not None:
                    state.windows.extend(c.name for c in node.find_all(exp.Column))


def translate(tree: exp.Query, *, streaming: bool = False, catalog: Catalog | None = None) -> Translation:
    """Spark SQL for ``tree`` (not modified); ``streaming`` when it runs as a Structured Streaming query;
    ``catalog``: the inputs' declared column types and event times (Flink's typing, temporal joins).
    Raises :class:`TranslationError` for untranslatable parts."""
    work = tree.copy()
    state = _State()
    catalog = catalog or Catalog()
    state.changed = rewrite(work, catalog.column_types(work))
    for table in list(work.find_all(exp.Table)):
        if _name(table.this) in TVF_NAMES:
            _tvf(table, state)
    for select in list(work.find_all(exp.Select)):
        _group_window(select, state)
    _interval_join_columns(work, state)
    _temporal_joins(work, state, catalog)
    _functions(work, state, streaming)
    windows, static = tuple(dict.fromkeys(state.windows)), tuple(dict.fromkeys(state.static))
    if not state.changed:
        return Translation(None, (), windows, static)
    return Translation(work.sql(dialect="spark", pretty=True), tuple(state.notes), windows, static)
