"""One-pass column-lineage walk over a parsed Spark query.

Why not ``sqlglot.lineage``/``qualify``: they re-qualify the query per column and raise (or guess)
on unknown/ambiguous columns, while we need one pass per model and explicit warnings. Each query
node evaluates to a :class:`DerivedRel` whose columns map to edges already composed down to
models/sources; expressions are walked once with a *mode* saying how a column found below is used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from sqlglot import exp

from dagster_streamt.lineage.column_exprs import ExprWalker, is_agg, is_time_window
from dagster_streamt.lineage.column_scope import (
    DIRECT,
    EMPTY,
    IDENTITY,
    INDIRECT,
    BaseRel,
    DerivedRel,
    Edge,
    Edges,
    GeneratorRel,
    MergedRel,
    Mode,
    Rel,
    Scope,
    compose,
    normalize,
)
from dagster_streamt.sql.normalize import TVF_NAMES

# relation name -> (canonical name, columns or None when unknown); None when not a model/source
Catalog = Callable[[str], tuple[str, list[str] | None] | None]


class StarEntry(NamedTuple):
    """What ``SELECT *`` expands to, in order: a relation (minus ``excluded``) or one merged column
    (a ``JOIN ... USING`` key, which Spark lists once, first)."""

    rel: Rel | None
    name: str = ""
    edges: Edges = EMPTY
    excluded: frozenset[str] = frozenset()


_FILTER: Mode = (INDIRECT, "FILTER")
_TRANSFORM: Mode = (DIRECT, "TRANSFORMATION")


class _Cte:
    """A CTE definition with the CTEs visible to it; evaluated lazily, at most once."""

    __slots__ = ("env", "node", "rel")

    def __init__(self, node: exp.CTE, env: dict[str, _Cte]) -> None:
        self.node = node
        self.env = env
        self.rel: DerivedRel | None = None


def _opaque(alias: str) -> Rel:
    """A relation we cannot analyze (already warned about): may have any column, yields no edges."""
    return GeneratorRel(alias, None, EMPTY)


def star_items(rel: Rel) -> list[tuple[str, Edges]] | None:
    """Columns ``SELECT *`` takes from ``rel`` in order, or None when they are not known."""
    if isinstance(rel, DerivedRel):
        return None if rel.passthrough else list(rel.items)
    if rel.columns is None:
        return None
    return [(c, rel.lookup(c) or EMPTY) for c in rel.columns]


class ModelWalker(ExprWalker):
    """Walks one model's query; collects warnings prefixed with the model name."""

    def __init__(self, model: str, catalog: Catalog) -> None:
        super().__init__(model)
        self.catalog = catalog
        self.approximated: set[str] = set()  # output names guessed for unaliased expressions

    # ----------------------------------------------------------------- queries
    def query(self, node: exp.Expr, outer: Scope | None, ctes: dict[str, _Cte]) -> DerivedRel:
        while isinstance(node, exp.Subquery):
            node = node.this
        ctes = self._with(node, ctes)
        if isinstance(node, exp.Select):
            return self.select(node, outer, ctes)
        if isinstance(node, exp.SetOperation):
            return self.setop(node, outer, ctes)
        if isinstance(node, exp.Values):
            return self._values(node)
        self.warn(f"unsupported query construct {node.key.upper()}")
        return DerivedRel([], [_opaque(node.key)])

    def _with(self, node: exp.Expr, ctes: dict[str, _Cte]) -> dict[str, _Cte]:
        with_ = node.args.get("with_")
        if not with_:
            return ctes
        env = dict(ctes)
        recursive = bool(with_.args.get("recursive"))
        for cte in with_.expressions:
            slot = _Cte(cte, dict(env))
            env[cte.alias_or_name.lower()] = slot
            if recursive:  # WITH RECURSIVE: a CTE sees itself (as an opaque relation while walked)
                slot.env[cte.alias_or_name.lower()] = slot
        return env

    def _cte_rel(self, cte: _Cte, name: str) -> DerivedRel:
        if cte.rel is None:
            cte.rel = DerivedRel([], [_opaque(name)])  # guards self-reference (recursive CTE)
            rel = self.query(cte.node.this, None, cte.env)
            if cte.node.alias_column_names:
                renamed = self._rename(rel, name, cte.node.alias_column_names)
                rel = renamed if isinstance(renamed, DerivedRel) else rel
            cte.rel = rel
        return cte.rel

    def _values(self, node: exp.Values) -> DerivedRel:
        first = node.expressions[0] if node.expressions else None
        width = len(first.expressions) if isinstance(first, exp.Tuple) else 1
        return DerivedRel([(f"col{i + 1}", EMPTY) for i in range(width)])

    def setop(self, node: exp.SetOperation, outer: Scope | None, ctes: dict[str, _Cte]) -> DerivedRel:
        # Flatten left-deep chains of the same operator so long UNION lists do not recurse deeply.
        branches: list[exp.Expr] = [node.expression]
        head: exp.Expr = node.this
        while type(head) is type(node) and not any(head.args.get(k) for k in ("with_", "order", "limit")):
            branches.append(head.expression)
            head = head.this
        branches.append(head)
        branches.reverse()
        kind = node.key.upper()
        rels = [self.query(b, outer, ctes) for b in branches]
        dataset: set[Edge] = set().union(*(r.dataset for r in rels))
        first = rels[0]
        items = list(first.items)
        passthrough: list[Rel] | None = None
        for i, rel in enumerate(rels[1:], start=2):
            if first.columns is not None and rel.columns is not None:
                if len(rel.items) != len(items):
                    self.warn(f"{kind} branch {i} has {len(rel.items)} columns, branch 1 has {len(items)}")
                pairs = [(n, e, rel.items[j][1]) for j, (n, e) in enumerate(items) if j < len(rel.items)]
            else:
                self.warn(
                    f"{kind} branch {i} has unknown columns (SELECT * over unknown schema); "
                    "matching its columns by name"
                )
                pairs = [(n, e, rel.lookup(n) or EMPTY) for n, e in items]
                if first.columns is None:
                    passthrough = [MergedRel([first, *rels[1:]])] if isinstance(node, exp.Union) else [first]
            if isinstance(node, exp.Union):
                items[: len(pairs)] = [(n, normalize(le | re)) for n, le, re in pairs]
            else:  # INTERSECT / EXCEPT: the other side only decides which rows survive
                for _, _, re in pairs:
                    dataset |= compose(_FILTER, re)
        result = DerivedRel(items, passthrough, normalize(dataset))
        order = node.args.get("order")
        if order is not None:
            scope = Scope(self.model, self.warn, outer, ctes, {"": result})
            dataset |= self.expr(order, scope, (INDIRECT, "SORT"))
            result = DerivedRel(items, passthrough, normalize(dataset))
        return result

    def select(self, node: exp.Select, outer: Scope | None, ctes: dict[str, _Cte]) -> DerivedRel:
        scope = Scope(self.model, self.warn, outer, ctes)
        for w in node.args.get("windows") or ():
            scope.named_windows[w.name.lower()] = w
        dataset: set[Edge] = set()
        stars: list[StarEntry] = []
        from_ = node.args.get("from_")
        if from_ is not None:
            rel = self.relation(from_.this, scope)
            self._add_rel(rel, scope)
            stars.append(StarEntry(rel))
        for join in node.args.get("joins") or ():
            self._join(join, scope, stars, dataset)
        for lateral in node.args.get("laterals") or ():
            rel = self.relation(lateral, scope)
            self._add_rel(rel, scope)
            stars.append(StarEntry(rel))
        for rel in scope.rels.values():
            dataset |= rel.dataset
        where = node.args.get("where")
        if where is not None:
            dataset |= self.expr(where.this, scope, _FILTER)

        group = node.args.get("group")
        group_exprs: list[exp.Expr] = []
        if group is not None:
            group_exprs = list(group.expressions)
            for key in ("grouping_sets", "cube", "rollup"):
                group_exprs.extend(group.args.get(key) or ())
            for g in group_exprs:  # GROUP BY window(ts, ...) exposes a `window` column
                name = is_time_window(g)
                if name:
                    scope.aliases[name] = normalize(self.expr(g, scope, _TRANSFORM))

        items: list[tuple[str, Edges]] = []
        passthrough: list[Rel] = []
        for e in node.expressions:
            self._select_item(e, scope, stars, items, passthrough)

        ordinal_edges = [edges for _, edges in items] if not passthrough else []
        for g in group_exprs:
            dataset |= self._clause(g, scope, (INDIRECT, "GROUP_BY"), ordinal_edges)
        if group is not None and group.args.get("all"):
            for e, (_, edges) in zip(node.expressions, items, strict=False):
                if not any(is_agg(n) for n in e.find_all(exp.Func)):
                    dataset |= compose((INDIRECT, "GROUP_BY"), edges)
        for key in ("having", "qualify"):
            clause = node.args.get(key)
            if clause is not None:
                dataset |= self.expr(clause.this, scope, _FILTER)
        scope.prefer_alias = True
        for key in ("order", "sort", "cluster"):
            clause = node.args.get(key)
            for o in clause.expressions if clause is not None else ():
                dataset |= self._clause(o, scope, (INDIRECT, "SORT"), ordinal_edges)
        return DerivedRel(items, passthrough, normalize(dataset))

    def _clause(self, node: exp.Expr, scope: Scope, mode: Mode, ordinals: list[Edges]) -> set[Edge]:
        """GROUP BY / ORDER BY item, where an integer literal means a SELECT position."""
        inner = node.this if isinstance(node, exp.Ordered) else node
        if isinstance(inner, exp.Literal) and not inner.is_string and inner.this.isdigit():
            pos = int(inner.this)
            if 1 <= pos <= len(ordinals):
                return compose(mode, ordinals[pos - 1])
            self.warn(f"position {pos} in GROUP BY/ORDER BY does not match a known SELECT column")
            return set()
        return self.expr(inner, scope, mode)

    def _select_item(
        self,
        e: exp.Expr,
        scope: Scope,
        stars: list[StarEntry],
        items: list[tuple[str, Edges]],
        passthrough: list[Rel],
    ) -> None:
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            excluded = {c.name.lower() for c in e.args.get("except_") or ()}
            entries = stars
            if isinstance(e, exp.Column):
                excluded = {c.name.lower() for c in e.this.args.get("except_") or ()}
                rel = scope.rels.get(e.table.lower())
                if rel is None:
                    self.warn(f"'{e.table}.*' names no relation in scope")
                    return
                entries = [StarEntry(rel)]
            for entry in entries:
                if entry.rel is None:
                    if entry.name.lower() not in excluded:
                        items.append((entry.name, entry.edges))
                    continue
                cols = star_items(entry.rel)
                if cols is None:
                    passthrough.append(entry.rel)
                    continue
                skip = excluded | entry.excluded
                items.extend((n, ed) for n, ed in cols if n.lower() not in skip)
            return
        edges = normalize(self.expr(e, scope, IDENTITY))
        for name in self._output_names(e):
            items.append((name, edges))
            scope.aliases[name.lower()] = edges  # Spark lateral column alias

    def _output_names(self, e: exp.Expr) -> list[str]:
        if isinstance(e, exp.Aliases):
            return [i.name for i in e.expressions]
        if isinstance(e, exp.Alias):
            return [e.alias]
        if isinstance(e, (exp.Column, exp.Dot)):
            return [e.name]
        window = is_time_window(e)
        if window:
            return [window]
        generated = self._generator_names(e)
        if generated:
            return generated
        # Spark names it after its SQL text; ours may differ in case/spacing, so the caller warns
        # when such a name reaches the model's output.
        text = e.sql(dialect="spark")
        self.approximated.add(text)
        return [text]

    # --------------------------------------------------------------- relations
    def _add_rel(self, rel: Rel, scope: Scope) -> None:
        key = rel.alias.lower()
        if key in scope.rels:
            self.warn(f"relation alias '{rel.alias}' is used twice in one FROM clause")
            key = f"{key}#{len(scope.rels)}"
        scope.rels[key] = rel

    def _join(self, join: exp.Join, scope: Scope, stars: list[StarEntry], dataset: set[Edge]) -> None:
        rel = self.relation(join.this, scope)
        using = [i.name for i in join.args.get("using") or ()]
        if (join.args.get("method") or "").upper() == "NATURAL":
            using = self._natural_keys(stars, rel)
        if using:
            side = (join.side or "").upper()
            new_cols: list[StarEntry] = []
            for name in using:
                left = scope.resolve(name) or EMPTY
                right = rel.lookup(name)
                if right is None:
                    self.warn(f"USING column '{name}' not found in '{rel.alias}'")
                    right = EMPTY
                dataset |= compose((INDIRECT, "JOIN"), left | right)
                merged = {"RIGHT": right, "FULL": normalize(compose(_TRANSFORM, left | right))}.get(side, left)
                scope.using[name.lower()] = merged
                new_cols.append(StarEntry(None, name, merged))
            keys = frozenset(n.lower() for n in using)
            kept = [
                e._replace(excluded=e.excluded | keys) if e.rel is not None else e
                for e in stars
                if e.rel is not None or e.name.lower() not in keys
            ]
            stars[:] = [*new_cols, *kept, StarEntry(rel, excluded=keys)]
        else:
            stars.append(StarEntry(rel))
        self._add_rel(rel, scope)
        on = join.args.get("on")
        if on is not None:
            dataset |= self.expr(on, scope, (INDIRECT, "JOIN"))

    def _natural_keys(self, stars: list[StarEntry], rel: Rel) -> list[str]:
        """NATURAL JOIN keys: column names common to both sides (needs both sides' columns)."""
        left: list[str] = []
        for entry in stars:
            cols = [(entry.name, entry.edges)] if entry.rel is None else star_items(entry.rel)
            if cols is None:
                left = []
                break
            left.extend(n for n, _ in cols if n.lower() not in entry.excluded)
        right = star_items(rel)
        if not left or right is None:
            self.warn(f"NATURAL JOIN with '{rel.alias}': columns unknown on one side, join keys not traced")
            return []
        right_keys = {n.lower() for n, _ in right}
        return list(dict.fromkeys(n for n in left if n.lower() in right_keys))

    def relation(self, node: exp.Expr, scope: Scope) -> Rel:
        """A FROM/JOIN/LATERAL VIEW item as a relation (CTE, model/source, subquery, generator)."""
        alias, renames = node.alias, node.alias_column_names
        rel: Rel
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            rel = self._table(node, scope)
            alias = alias or node.name
        elif isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) \
                and str(node.this.this).upper() in TVF_NAMES:
            rel, base = self._window_tvf(node.this, scope)
            alias = alias or base
        elif isinstance(node, exp.Subquery):
            rel = self.query(node.this, scope.parent, scope.ctes)
        elif isinstance(node, exp.Lateral) and isinstance(node.this, exp.Subquery):
            rel = self.query(node.this.this, scope, scope.ctes)
        elif isinstance(node, exp.Lateral):
            edges = normalize(self.expr(node.this, scope, _TRANSFORM))
            names = renames or self._generator_names(node.this)
            return GeneratorRel(alias or f"lateral#{len(scope.rels)}", names, edges)
        elif isinstance(node, exp.Values):
            rel = self._values(node)
        else:
            self.warn(f"unsupported relation {node.sql(dialect='spark')[:80]!r}: its columns are unknown")
            return _opaque(alias or node.key)
        if isinstance(node, exp.Table) and node.args.get("pivots"):
            self.warn(f"PIVOT/UNPIVOT on '{alias}' is not analyzed: its columns are unknown")
            return _opaque(alias)
        if renames:
            rel = self._rename(rel, alias, renames)
        if isinstance(rel, DerivedRel):
            return DerivedRel(rel.items, rel.passthrough, rel.dataset, alias)
        rel.alias = alias
        return rel

    def _window_tvf(self, call: exp.Anonymous, scope: Scope) -> tuple[Rel, str]:
        """Flink's ``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...))``: t's columns plus ``window_start``,
        ``window_end`` and ``window_time``, each derived from the time column."""
        args = [a.expression if isinstance(a, exp.Kwarg) else a for a in call.expressions]
        data = args[0] if args else None
        base_name = data.name if isinstance(data, exp.Column) else ""
        base = self._table(exp.to_table(base_name), scope) if base_name else _opaque("tvf")
        descriptor = args[1] if len(args) > 1 else None
        ts = descriptor.expressions[0] if isinstance(descriptor, exp.Anonymous) and descriptor.expressions else None
        found = base.lookup(ts.name) if isinstance(ts, exp.Column) else None
        derived = frozenset((r, c, t, "TRANSFORMATION") for r, c, t, _ in (found or ()))
        cols = star_items(base)
        items = [*(cols or []), *((n, derived) for n in ("window_start", "window_end", "window_time"))]
        return DerivedRel(items, None if cols is not None else [base], base.dataset), base_name

    def _table(self, node: exp.Table, scope: Scope) -> Rel:
        name = node.name
        if node.args.get("db") is not None:
            full = ".".join(p.name for p in node.parts)
            self.warn(f"relation '{full}' is not a model or source: its columns are unknown")
            return BaseRel(name, full, None)
        cte = scope.ctes.get(name.lower())
        if cte is not None:
            return self._cte_rel(cte, name)
        entry = self.catalog(name)
        if entry is None:
            self.warn(f"relation '{name}' is not a model or source: its columns are unknown")
            return BaseRel(name, name, None)
        return BaseRel(name, entry[0], entry[1])

    def _rename(self, rel: Rel, alias: str, names: list[str]) -> Rel:
        cols = star_items(rel)
        if cols is None:
            self.warn(f"cannot apply column aliases to '{alias}': its columns are unknown")
            return rel
        if len(cols) != len(names):
            self.warn(f"'{alias}' has {len(cols)} columns but {len(names)} column aliases")
        items = [(new, edges) for new, (_, edges) in zip(names, cols, strict=False)]
        return DerivedRel(items, None, rel.dataset, alias)

    def _generator_names(self, func: exp.Expr) -> list[str] | None:
        if isinstance(func, exp.Posexplode):
            return ["pos", "col"]
        if isinstance(func, exp.Explode) or func.key == "explodeouter":
            return ["col"]
        return None
