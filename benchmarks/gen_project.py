"""Generate a synthetic but realistic streamt project with N models, for load/lineage benchmarks.

Shape (deterministic for a given seed):

* ~5% as many sources as models (file, kafka, delta and catalog-table sources with 10 typed,
  classified columns, some with event time and freshness);
* a layered DAG: staging models read one source each; each later model reads 1-4 earlier models
  (one from the previous level so the DAG is deep, the rest from any earlier level, picked by
  preferential attachment so a few hub models have a large fan-out) and sometimes a source too;
* SQL with explicit column lists (about 10 output columns), qualified columns, JOIN ... ON,
  GROUP BY / HAVING, CASE, window functions, CTEs, the odd UNION ALL, ``{{ var() }}`` filters;
  every column a query reads exists in its input, so column lineage can be traced too;
* tags, owners, descriptions, documented columns on some models, a few sinks (``from:``), tests on
  ~10% of the models and some sources, exposures on ~1%, three schedules and governance rules;
* models split into files of at most 100 under ``models/<layer>/<domain>/``.

Usage: ``python benchmarks/gen_project.py OUT_DIR --models N [--seed S]`` or ``generate(...)``.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

try:
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

MARKER = ".streamt-bench-generated"
MODELS_PER_FILE = 100
TESTS_PER_FILE = 100
ENTITY_DIRS = ("sources", "models", "tests", "exposures", "target")

DOMAINS = ("sales", "finance", "marketing", "ops", "product", "support", "logistics", "risk")
TEAMS = {
    "sales": ("sales-analytics", "revenue-eng"),
    "finance": ("finance-eng", "fpa-analytics"),
    "marketing": ("growth", "marketing-analytics"),
    "ops": ("ops-eng", "platform"),
    "product": ("product-analytics", "data-science"),
    "support": ("cx-analytics",),
    "logistics": ("supply-chain", "ops-eng"),
    "risk": ("risk-team", "fraud-ml"),
}
ENTITIES = ("orders", "payments", "customers", "sessions", "events", "invoices", "shipments", "tickets",
            "accounts", "refunds", "clicks", "subscriptions", "products", "inventory", "campaigns")
NUMERIC = ("amount", "quantity", "price", "discount", "score", "clicks", "duration_ms", "balance", "cost",
           "units", "fee", "tax", "margin", "visits", "revenue")
STRINGS = ("status", "channel", "category", "segment", "device", "currency", "tier", "country_code")
NUM_PREFIXES = ("total_", "avg_", "max_", "min_", "net_", "gross_", "sum_", "n_", "prev_", "running_", "adj_")
STR_VALUES = {"status": ("placed", "paid", "shipped", "cancelled"), "channel": ("web", "app", "store"),
              "tier": ("gold", "silver", "bronze")}
EXTRA_TAGS = ("daily", "hourly", "pii", "critical", "kpi", "experimental", "gdpr", "finance_close")
CORE = (("id", "bigint"), ("customer_id", "bigint"), ("region", "string"), ("event_ts", "timestamp"))

LAYERS = {"stg": "staging", "int": "intermediate", "mart": "marts"}


@dataclass
class Node:
    name: str
    kind: str  # source | model
    domain: str
    level: int
    numeric: list[str]
    strings: list[str]
    owner: str = ""
    tags: list[str] = field(default_factory=list)
    sink: bool = False

    @property
    def columns(self) -> list[tuple[str, str]]:
        return [*CORE, *((c, "double") for c in self.numeric), *((c, "string") for c in self.strings)]


def _base(col: str) -> str:
    for p in NUM_PREFIXES:
        if col.startswith(p):
            return col[len(p):]
    return col


class _Names:
    """Unique output column names within one SELECT."""

    def __init__(self) -> None:
        self.used = {c for c, _ in CORE}

    def fresh(self, gen: Any, *args: Any) -> tuple[str, str]:
        """Call ``gen(*args) -> (expr, wanted)`` until the name is new (a few tries), then take it."""
        for _ in range(6):
            expr, wanted = gen(*args)
            if wanted not in self.used:
                break
        return expr, self.take(wanted)

    def take(self, wanted: str) -> str:
        name, i = wanted, 2
        while name in self.used:
            name = f"{wanted}_{i}"
            i += 1
        self.used.add(name)
        return name


class _Gen:
    def __init__(self, n_models: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n_models = n_models
        self.sources: list[Node] = []
        self.models: list[Node] = []
        self.model_docs: list[dict[str, Any]] = []
        self.pool: dict[int, list[Node]] = {}  # level -> preferential-attachment pool
        self.consumers: dict[str, int] = {}

    # -- structure --------------------------------------------------------------------------
    def _owner(self, domain: str) -> str:
        return self.rng.choice(TEAMS[domain])

    def make_sources(self) -> None:
        n = max(2, round(self.n_models * 0.05))
        for i in range(n):
            domain = DOMAINS[i % len(DOMAINS)]
            entity = self.rng.choice(ENTITIES)
            numeric = self.rng.sample(NUMERIC, 4)
            strings = self.rng.sample(STRINGS, 2)
            node = Node(f"src_{domain}_{entity}_{i:04d}", "source", domain, 0, numeric, strings,
                        owner=self._owner(domain), tags=sorted({domain, "raw", entity}))
            self.sources.append(node)
        self.pool[0] = list(self.sources)

    def _levels(self) -> list[int]:
        """Number of models at each level 1..L (staging is level 1)."""
        n = self.n_models
        depth = max(3, min(14, round(math.log2(max(n, 2)))))
        staging = max(1, round(n * 0.2))
        rest = n - staging
        per = [rest // (depth - 1)] * (depth - 1)
        for i in range(rest - sum(per)):
            per[i] += 1
        return [staging, *per]

    def _pick(self, level: int, exclude: set[str]) -> Node | None:
        pool = self.pool.get(level) or []
        for _ in range(8):
            if not pool:
                return None
            cand = self.rng.choice(pool)
            if cand.name not in exclude and not cand.sink:
                pool.append(cand)  # preferential attachment: the rich get richer
                return cand
        return None

    def make_models(self) -> None:
        counts = self._levels()
        depth = len(counts)
        idx = 0
        src_cycle = list(self.sources)
        self.rng.shuffle(src_cycle)
        n_sinks = max(1, round(self.n_models * 0.02)) if self.n_models >= 20 else 0
        for level, count in enumerate(counts, start=1):
            prefix = "stg" if level == 1 else "mart" if level >= depth - 1 else "int"
            self.pool[level] = []
            for j in range(count):
                idx += 1
                is_sink = level == depth and j >= count - n_sinks
                if level == 1:
                    src = src_cycle[j] if j < len(src_cycle) else self._pick(0, set())
                    assert src is not None
                    inputs = [src]
                    domain = src.domain
                else:
                    k = 1 if is_sink else self.rng.choices((1, 2, 3, 4), weights=(30, 35, 23, 12))[0]
                    first = self._pick(level - 1, set())
                    assert first is not None
                    inputs = [first]
                    while len(inputs) < k:
                        r = self.rng.random()
                        lv = 0 if r < 0.08 else level - 1 if r < 0.5 else self.rng.randint(1, level - 1)
                        got = self._pick(lv, {i.name for i in inputs})
                        if got is not None:
                            inputs.append(got)
                        elif self.rng.random() < 0.3:
                            break
                    domain = first.domain if self.rng.random() < 0.75 else self.rng.choice(DOMAINS)
                name = f"{prefix}_{domain}_{idx:05d}"
                tags = {LAYERS[prefix], domain}
                tags.update(self.rng.sample(EXTRA_TAGS, self.rng.choice((0, 1, 1, 2))))
                node = Node(name, "model", domain, level, [], [], owner=self._owner(domain), tags=sorted(tags),
                            sink=is_sink)
                doc = self._model_doc(node, inputs, prefix)
                self.models.append(node)
                self.model_docs.append(doc)
                if not is_sink:
                    self.pool[level].append(node)
                for i in inputs:
                    self.consumers[i.name] = self.consumers.get(i.name, 0) + 1

    # -- SQL ----------------------------------------------------------------------------------
    def _ref(self, node: Node) -> str:
        fn = "source" if node.kind == "source" else "ref"
        return '{{ ' + fn + '("' + node.name + '") }}'

    def _num_expr(self, rels: list[tuple[str, Node | dict[str, list[str]]]], agg: bool) -> tuple[str, str]:
        """(expression, wanted output name) for a numeric output column."""
        rng = self.rng
        alias, rel = rng.choice(rels)
        col = rng.choice(_nums(rel))
        q = f"{alias}.{col}"
        b = _base(col)
        r = rng.random()
        if agg:
            if r < 0.3:
                return f"sum({q})", f"total_{b}"
            if r < 0.5:
                return f"round(avg({q}), 2)", f"avg_{b}"
            if r < 0.6:
                return f"max({q})", f"max_{b}"
            if r < 0.7:
                return f"count(DISTINCT {alias}.id)", f"n_{alias}_ids"
            if r < 0.85:
                return (f"sum(CASE WHEN {q} > {{{{ var(\"high_value_threshold\") }}}} THEN {q} ELSE 0 END)",
                        f"gross_{b}")
            a2, rel2 = rng.choice(rels)
            c2 = rng.choice(_nums(rel2))
            return f"sum(coalesce({q}, 0) - coalesce({a2}.{c2}, 0))", f"net_{b}"
        if r < 0.45:
            return q, col
        if r < 0.6:
            return f"round({q} * 1.2, 2)", f"gross_{b}"
        if r < 0.75:
            a2, rel2 = rng.choice(rels)
            c2 = rng.choice(_nums(rel2))
            return f"coalesce({q}, 0) + coalesce({a2}.{c2}, 0)", f"sum_{b}"
        if r < 0.9:
            return f"CASE WHEN {q} IS NULL THEN 0 WHEN {q} < 0 THEN -{q} ELSE {q} END", f"adj_{b}"
        return f"CAST({q} AS DOUBLE)", col

    def _str_expr(self, rels: list[tuple[str, Node | dict[str, list[str]]]], agg: bool) -> tuple[str, str]:
        rng = self.rng
        with_str = [(a, r) for a, r in rels if _strs(r)]
        r = rng.random()
        if agg:
            alias, rel = rng.choice(rels)
            col = rng.choice(_nums(rel))
            if with_str and r < 0.5:
                a, s = rng.choice(with_str)
                c = rng.choice(_strs(s))
                return f"max({a}.{c})", c
            return (f"CASE WHEN sum({alias}.{col}) >= 1000 THEN 'gold' WHEN sum({alias}.{col}) >= 100 "
                    "THEN 'silver' ELSE 'bronze' END", "tier")
        if with_str and r < 0.6:
            a, s = rng.choice(with_str)
            c = rng.choice(_strs(s))
            if r < 0.3:
                return f"{a}.{c}", c
            if r < 0.45:
                return f"coalesce(lower({a}.{c}), 'unknown')", c
            return f"upper(trim({a}.{c}))", c
        alias, rel = rng.choice(rels)
        col = rng.choice(_nums(rel))
        return (f"CASE WHEN {alias}.{col} >= {{{{ var(\"high_value_threshold\") }}}} THEN 'high' "
                f"WHEN {alias}.{col} >= 100 THEN 'medium' ELSE 'low' END", f"{_base(col)}_band")

    def _window_expr(self, alias: str, rel: Node | dict[str, list[str]]) -> tuple[str, str]:
        col = self.rng.choice(_nums(rel))
        b = _base(col)
        over = f"PARTITION BY {alias}.customer_id ORDER BY {alias}.event_ts"
        return self.rng.choice((
            (f"row_number() OVER ({over} DESC)", "recency_rank"),
            (f"sum({alias}.{col}) OVER ({over} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)", f"running_{b}"),
            (f"lag({alias}.{col}, 1) OVER ({over})", f"prev_{b}"),
            (f"round(avg({alias}.{col}) OVER (PARTITION BY {alias}.region), 2)", f"avg_{b}"),
            (f"dense_rank() OVER (PARTITION BY {alias}.region ORDER BY {alias}.{col} DESC)", f"{b}_rank"),
        ))

    def _where(self, alias: str, rel: Node | dict[str, list[str]]) -> str:
        conds = [f"{alias}.id IS NOT NULL"]
        r = self.rng.random()
        if r < 0.35:
            conds.append(f"{alias}.{self.rng.choice(_nums(rel))} >= {{{{ var(\"min_amount\") }}}}")
        elif r < 0.55:
            conds.append(f"{alias}.event_ts >= TIMESTAMP '2024-01-01 00:00:00'")
        elif r < 0.7:
            conds.append(f"{alias}.region IN ('emea', 'amer', 'apac')")
        return "\n  AND ".join(conds)

    def _select(self, node: Node, inputs: list[Node], stage: bool) -> str:
        """Build the model's SQL and fill node.numeric / node.strings with its output columns."""
        rng = self.rng
        n_num = rng.choice((4, 5, 5, 6))
        n_str = rng.choice((1, 2, 2))
        names = _Names()
        if stage:
            src = inputs[0]
            lines = ["CAST(s.id AS BIGINT) AS id", "s.customer_id", "lower(trim(s.region)) AS region",
                     "CAST(s.event_ts AS TIMESTAMP) AS event_ts"]
            rels: list[tuple[str, Node | dict[str, list[str]]]] = [("s", src)]
            for _ in range(n_num):
                e, out = names.fresh(self._num_expr, rels, False)
                node.numeric.append(out)
                lines.append(e if e == f"s.{out}" else f"{e} AS {out}")
            for _ in range(n_str):
                e, out = names.fresh(self._str_expr, rels, False)
                node.strings.append(out)
                lines.append(e if e == f"s.{out}" else f"{e} AS {out}")
            return (_sql_select(lines) + f"FROM {self._ref(src)} AS s\nWHERE {self._where('s', src)}\n")

        r = rng.random()
        if len(inputs) == 2 and r < 0.04:
            return self._union(node, inputs, n_num)
        mode = "cte" if r < 0.14 and len(inputs) >= 2 else "agg" if r < 0.5 else "window" if r < 0.68 else "plain"
        ctes: list[str] = []
        rels = [("t0", inputs[0])]
        joins: list[str] = []
        for i, inp in enumerate(inputs[1:], start=1):
            if mode == "cte":
                cname = f"{inp.name.split('_')[0]}_{i}"
                by_base = {_base(c): c for c in inp.numeric}  # distinct output names
                picked = rng.sample(sorted(by_base), min(2, len(by_base)))
                cols = [by_base[b] for b in picked]
                agg_cols = [f"sum(x.{c}) AS sum_{_base(c)}" for c in cols]
                ctes.append(f"{cname} AS (\n  SELECT x.customer_id, count(*) AS n_rows, {', '.join(agg_cols)}\n"
                            f"  FROM {self._ref(inp)} AS x\n  GROUP BY x.customer_id\n)")
                rel: Node | dict[str, list[str]] = {"numeric": ["n_rows", *(f"sum_{_base(c)}" for c in cols)],
                                                    "strings": []}
                rels.append((cname, rel))
                joins.append(f"LEFT JOIN {cname}\n  ON {cname}.customer_id = t0.customer_id")
            else:
                alias = f"t{i}"
                rels.append((alias, inp))
                kind = rng.choice(("JOIN", "LEFT JOIN", "LEFT JOIN"))
                on = f"{alias}.customer_id = t0.customer_id"
                if rng.random() < 0.3:
                    on += f" AND {alias}.region = t0.region"
                joins.append(f"{kind} {self._ref(inp)} AS {alias}\n  ON {on}")
        agg = mode == "agg"
        if agg:
            lines = ["max(t0.id) AS id", "t0.customer_id", "t0.region", "max(t0.event_ts) AS event_ts"]
        else:
            lines = ["t0.id", "t0.customer_id", "t0.region", "t0.event_ts"]
        n_win = rng.choice((1, 2)) if mode == "window" else 0
        for k in range(n_num):
            if k < n_win:
                e, out = names.fresh(self._window_expr, *rels[0])
            else:
                e, out = names.fresh(self._num_expr, rels, agg)
            node.numeric.append(out)
            lines.append(f"{e} AS {out}" if not e.endswith(f".{out}") else e)
        for _ in range(n_str):
            e, out = names.fresh(self._str_expr, rels, agg)
            node.strings.append(out)
            lines.append(f"{e} AS {out}" if not e.endswith(f".{out}") else e)
        sql = ("WITH " + ",\n".join(ctes) + "\n") if ctes else ""
        sql += _sql_select(lines) + f"FROM {self._ref(inputs[0])} AS t0\n"
        sql += "".join(j + "\n" for j in joins)
        if rng.random() < 0.6:
            sql += f"WHERE {self._where('t0', inputs[0])}\n"
        if agg:
            sql += "GROUP BY t0.customer_id, t0.region\n"
            if rng.random() < 0.25:
                sql += "HAVING count(*) > 1\n"
        return sql

    def _union(self, node: Node, inputs: list[Node], n_num: int) -> str:
        a, b = inputs
        n = min(n_num, len(a.numeric), len(b.numeric))
        names = _Names()
        outs = [names.take(c) for c in a.numeric[:n]]
        node.numeric.extend(outs)
        node.strings.append("origin")
        parts = []
        for inp, tag in ((a, "a"), (b, "b")):
            cols = ["u.id", "u.customer_id", "u.region", "u.event_ts"]
            cols += [f"CAST(u.{c} AS DOUBLE) AS {o}" for c, o in zip(inp.numeric[:n], outs, strict=True)]
            cols.append(f"'{tag}' AS origin")
            parts.append(_sql_select(cols) + f"FROM {self._ref(inp)} AS u\nWHERE u.id IS NOT NULL\n")
        return "UNION ALL\n".join(parts)

    # -- YAML entries --------------------------------------------------------------------------
    def _model_doc(self, node: Node, inputs: list[Node], prefix: str) -> dict[str, Any]:
        rng = self.rng
        names = ", ".join(i.name for i in inputs)
        doc: dict[str, Any] = {"name": node.name}
        if node.sink:
            doc["description"] = f"Exports {inputs[0].name} as Parquet files for the {node.domain} data lake."
            doc["materialized"] = "sink"
            doc["owner"] = node.owner
            doc["tags"] = node.tags
            doc["from"] = inputs[0].name
            doc["sink"] = {"format": "parquet", "path": f"exports/{node.domain}/{node.name}"}
            return doc
        stage = prefix == "stg"
        sql = self._select(node, inputs, stage)
        what = "Cleaned and typed" if stage else "Aggregated" if "GROUP BY" in sql else "Joined and enriched"
        doc["description"] = f"{what} {node.domain} data from {names}."
        r = rng.random()
        if stage:
            doc["materialized"] = "stream" if r < 0.2 else "view" if r < 0.45 else "table"
        else:
            doc["materialized"] = "view" if r < 0.15 else "table"
        if rng.random() < 0.9:  # the rest take defaults.models.owner
            doc["owner"] = node.owner
        doc["tags"] = node.tags
        if prefix == "mart":
            doc["access"] = "public"
        if doc["materialized"] == "stream":
            doc["event_time"] = {"column": "event_ts", "watermark": "10 minutes"}
            doc["advanced"] = {"spark": {"output_mode": "append"}}
        if rng.random() < 0.3:
            doc["columns"] = [{"name": c, "type": t, "description": f"{c.replace('_', ' ')} ({t})"}
                              for c, t in node.columns]
        doc["sql"] = sql
        return doc

    def source_doc(self, s: Node, i: int) -> dict[str, Any]:
        rng = self.rng
        entity = s.name.split("_")[2]
        doc: dict[str, Any] = {"name": s.name, "description": f"Raw {entity} records of the {s.domain} domain.",
                               "owner": s.owner, "tags": s.tags}
        kind = i % 5
        if kind == 0:
            doc.update(format="json", path=f"data/{s.domain}/{s.name}")
        elif kind == 1:
            doc.update(format="csv", path=f"data/{s.domain}/{s.name}", options={"header": "true"})
        elif kind == 2:
            doc.update(topic=f"{s.domain}.{entity}.v1", options={"startingOffsets": "earliest"})
        elif kind == 3:
            doc.update(format="delta", path=f"lake/{s.domain}/{s.name}")
        else:
            doc.update(table=f"raw.{s.name}")
        classes = ("internal", "confidential", "public")
        cols = []
        for c, t in s.columns:
            cls = "sensitive" if c == "customer_id" else rng.choice(classes)
            col: dict[str, Any] = {"name": c, "type": t, "classification": cls}
            if rng.random() < 0.5:
                col["description"] = f"{c.replace('_', ' ').capitalize()} of the {entity} record"
            cols.append(col)
        doc["columns"] = cols
        if kind in (0, 2) or rng.random() < 0.3:
            doc["event_time"] = {"column": "event_ts", "watermark": "10 minutes"}
            doc["freshness"] = {"warn_after": "1h", "error_after": "6h"}
        return doc

    def tests(self) -> list[dict[str, Any]]:
        out = []
        for m in self.models:
            if m.sink or self.rng.random() >= 0.1:
                continue
            assertions: list[dict[str, Any]] = [{"not_null": {"columns": ["id", "customer_id"]}}]
            if self.rng.random() < 0.5:
                assertions.append({"unique": {"columns": ["id"]}})
            if m.numeric and self.rng.random() < 0.6:
                assertions.append({"range": {"column": m.numeric[0], "min": 0, "max": 1_000_000}})
            status = next((c for c in m.strings if c in STR_VALUES), None)
            if status:
                assertions.append({"accepted_values": {"column": status, "values": list(STR_VALUES[status])}})
            t: dict[str, Any] = {"name": f"{m.name}_quality", "model": m.name,
                                 "type": self.rng.choice(("sample", "sample", "schema")), "assertions": assertions}
            if self.rng.random() < 0.3:
                t["severity"] = "warn"
            out.append(t)
        for s in self.sources[::7]:
            out.append({"name": f"{s.name}_not_null", "source": s.name, "type": "sample",
                        "assertions": [{"not_null": {"columns": ["id", "event_ts"]}}]})
        return out

    def exposures(self) -> list[dict[str, Any]]:
        leaves = [m for m in self.models if self.consumers.get(m.name, 0) == 0]
        n = max(1, round(self.n_models * 0.01))
        out = []
        for i in range(n):
            picks = self.rng.sample(leaves, min(len(leaves), self.rng.randint(1, 3)))
            domain = picks[0].domain
            kind = self.rng.choice(("dashboard", "application", "ml_model", "notebook"))
            e: dict[str, Any] = {"name": f"{domain}_{kind}_{i:04d}", "type": kind,
                                 "description": f"{kind.replace('_', ' ').capitalize()} fed by {domain} marts.",
                                 "owner": self._owner(domain), "tags": [domain],
                                 "consumes": [{"ref": p.name} for p in picks]}
            if kind == "dashboard":
                e["url"] = f"https://bi.example.com/d/{domain}-{i}"
            out.append(e)
        return out


def _nums(rel: Node | dict[str, list[str]]) -> list[str]:
    return rel.numeric if isinstance(rel, Node) else rel["numeric"]


def _strs(rel: Node | dict[str, list[str]]) -> list[str]:
    return rel.strings if isinstance(rel, Node) else rel["strings"]


def _sql_select(lines: list[str]) -> str:
    return "SELECT\n" + ",\n".join(f"  {x}" for x in lines) + "\n"


# -- writing ----------------------------------------------------------------------------------------
class _Dump(_Dumper):  # type: ignore[misc, valid-type]
    pass


def _str_repr(dumper: Any, value: str) -> Any:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dump.add_representer(str, _str_repr)


def _write(path: Path, data: Any, header: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.dump(data, Dumper=_Dump, sort_keys=False, default_flow_style=False, width=120,
                     allow_unicode=True)
    path.write_text((f"# {header}\n" if header else "") + text, encoding="utf-8")


def _prepare(out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists():
            raise SystemExit(f"{out} is not empty and was not made by this generator; pick another folder")
        for d in ENTITY_DIRS:
            if (out / d).is_dir():
                shutil.rmtree(out / d)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("generated by benchmarks/gen_project.py\n", encoding="utf-8")


def generate(out_dir: str | Path, n_models: int, seed: int = 0) -> dict[str, Any]:
    """Write a project with ``n_models`` models into ``out_dir``; return a small summary."""
    if n_models < 1:
        raise ValueError("n_models must be >= 1")
    out = Path(out_dir)
    _prepare(out)
    g = _Gen(n_models, seed)
    g.make_sources()
    g.make_models()

    tags_used = sorted({t for m in g.models for t in m.tags})
    schedules = [{"name": "staging_hourly", "cron": "5 * * * *", "select": "tag:staging+",
                  "description": "Refresh staging and everything fed by it."}]
    if "daily" in tags_used:
        schedules.append({"name": "daily_refresh", "cron": "0 3 * * *", "select": "tag:daily",
                          "timezone": "Europe/Paris"})
    schedules.append({"name": f"{g.models[-1].domain}_marts", "cron": "30 6 * * 1-5",
                      "select": f"+{g.models[-1].name}"})
    root = {
        "project": {"name": f"bench_{n_models}", "version": "1.0.0",
                    "description": f"Synthetic benchmark project with {n_models} models (seed {seed})."},
        "runtime": {"spark": {"master": "local[2]", "conf": {"spark.sql.shuffle.partitions": "8"}},
                    "openlineage": {"namespace": f"bench_{n_models}"}},
        "defaults": {"models": {"materialized": "table", "owner": "data-platform"}},
        "vars": {"min_amount": 0, "high_value_threshold": 500},
        "rules": {"models": {"require_description": True, "require_owner": True,
                             "naming_pattern": "^[a-z][a-z0-9_]*$", "max_dependencies": 6,
                             "allowed_materializations": ["table", "view", "stream", "sink"]},
                  "sources": {"require_columns": True, "require_description": True}},
        "schedules": schedules,
    }
    _write(out / "stream_project.yml", root, "Generated by benchmarks/gen_project.py: do not edit by hand.")

    by_domain: dict[str, list[dict[str, Any]]] = {}
    for i, s in enumerate(g.sources):
        by_domain.setdefault(s.domain, []).append(g.source_doc(s, i))
    for domain, docs in by_domain.items():
        _write(out / "sources" / f"{domain}.yml", {"sources": docs})

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for m, doc in zip(g.models, g.model_docs, strict=True):
        layer = LAYERS[m.name.split("_")[0]]
        groups.setdefault((layer, m.domain), []).append(doc)
    n_files = 0
    for (layer, domain), docs in sorted(groups.items()):
        for part in range(0, len(docs), MODELS_PER_FILE):
            chunk = docs[part:part + MODELS_PER_FILE]
            _write(out / "models" / layer / domain / f"{layer}_{domain}_{part // MODELS_PER_FILE:03d}.yml",
                   {"models": chunk})
            n_files += 1

    tests = g.tests()
    for part in range(0, len(tests), TESTS_PER_FILE):
        _write(out / "tests" / f"quality_{part // TESTS_PER_FILE:03d}.yml",
               {"tests": tests[part:part + TESTS_PER_FILE]})
    exposures = g.exposures()
    exp_by_domain: dict[str, list[dict[str, Any]]] = {}
    for e in exposures:
        exp_by_domain.setdefault(e["tags"][0], []).append(e)
    for domain, docs in exp_by_domain.items():
        _write(out / "exposures" / f"{domain}.yml", {"exposures": docs})

    return {"dir": str(out), "sources": len(g.sources), "models": len(g.models),
            "sinks": sum(m.sink for m in g.models), "levels": max(m.level for m in g.models),
            "model_files": n_files, "tests": len(tests), "exposures": len(exposures),
            "edges": sum(g.consumers.values())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--models", type=int, required=True, help="number of models (sinks included)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    info = generate(args.out_dir, args.models, args.seed)
    print(", ".join(f"{k}={v}" for k, v in info.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
