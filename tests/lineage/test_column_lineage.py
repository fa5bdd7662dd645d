"""Static column-level lineage: per-query corpus, cross-model traversal, caching, robustness."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dagster_streamt.lineage.columns import (
    ColumnEdge,
    ColumnRef,
    LineageHit,
    LineageStep,
    ModelColumnLineage,
    ProjectColumnLineage,
    analyze_columns,
    lineage_cache_key,
)
from dagster_streamt.sql.normalize import normalize, restore

from .column_lineage_corpus import CASES, SOURCES, STG_SQL, Case


def fmt(edges: tuple[ColumnEdge, ...]) -> set[str]:
    return {f"{e.source.relation}.{e.source.column} {e.type} {e.subtype}" for e in edges}


def analyze_one(sql: str) -> ModelColumnLineage:
    project = analyze_columns({"stg": STG_SQL, "m": sql}, ["stg", "m"], SOURCES)
    assert project.models["stg"].warnings == ()
    return project.models["m"]


def test_corpus_is_large_and_unique() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus(case: Case) -> None:
    result = analyze_one(case.sql)
    assert list(result.columns) == case.columns
    assert {k: fmt(v) for k, v in result.fields.items()} == case.fields
    assert fmt(result.dataset) == case.dataset
    assert list(result.warnings) == case.warnings
    # Deterministic, sorted contents.
    for edges in [*result.fields.values(), result.dataset]:
        assert list(edges) == sorted(edges)


def test_parse_failure_is_a_warning_not_an_exception() -> None:
    project = analyze_columns(
        {"bad": "SELECT a FROM WHERE (", "after": "SELECT * FROM `bad`"},
        ["bad", "after"],
        {},
        {"bad": ["a", "b"]},
    )
    bad = project.models["bad"]
    assert bad.columns == ("a", "b")
    assert bad.fields == {"a": (), "b": ()}
    assert len(bad.warnings) == 1
    assert bad.warnings[0].startswith("bad: could not parse SQL (")
    assert bad.warnings[0].endswith("); column lineage unknown")
    # Downstream still expands * from the declared columns.
    after = project.models["after"]
    assert after.columns == ("a", "b")
    assert fmt(after.fields["a"]) == {"bad.a DIRECT IDENTITY"}


@pytest.mark.parametrize(
    "sql",
    [
        "",
        ";",
        "SELECT 1; SELECT 2",
        "INSERT INTO t SELECT 1",
        "CREATE TABLE x AS SELECT 1",
        "SELECT * FROM `a` PIVOT (sum(x) FOR k IN ('p', 'q'))",
        "SELECT * FROM range(10)",
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
        "SELECT " + " + ".join(["(a"] * 300) + ")" * 300 + " AS deep FROM `orders`",
        "SELECT a FROM `orders` GROUP BY window(",
        "SELECT t.* FROM `orders`",
        "SELECT x FROM `orders` o JOIN `orders` o ON o.order_id = o.order_id",
    ],
)
def test_never_raises(sql: str) -> None:
    project = analyze_columns({"m": sql}, ["m"], SOURCES)
    assert "m" in project.models
    json.dumps(project.to_dict())


def test_truncated_corpus_queries_never_raise() -> None:
    """Every word-boundary prefix of every corpus query: invalid SQL must become warnings."""
    models = {}
    for case in CASES:
        cuts = [i for i, ch in enumerate(case.sql) if ch == " "]
        models.update({f"{case.id}_{i}": case.sql[:i] for i in cuts})
    project = analyze_columns({"stg": STG_SQL, **models}, ["stg", *models], SOURCES)
    assert set(project.models) == {"stg", *models}
    assert all(m.warnings or m.columns for m in project.models.values())


def test_missing_sql_and_schema_values_do_not_raise() -> None:
    project = analyze_columns(
        {"sink": None, "m": "SELECT * FROM `src`"},
        ["sink", "m"],
        {"src": None},  # type: ignore[dict-item]
        {"sink": ["a"]},
    )
    assert project.models["sink"].columns == ("a",)
    assert project.models["sink"].warnings == ("sink: model has no SQL; column lineage unknown",)
    assert project.models["m"].columns == ()


def test_union_chain_does_not_recurse_per_branch() -> None:
    branches = " UNION ALL ".join(f"SELECT order_id, amount + {i} AS amount FROM `orders`" for i in range(400))
    result = analyze_one(branches)
    assert result.columns == ("order_id", "amount")
    assert fmt(result.fields["amount"]) == {"orders.amount DIRECT TRANSFORMATION"}
    assert result.warnings == ()


def test_window_call_rewrite_only_touches_calls() -> None:
    sql = "SELECT 'window(' AS s, `window`, window (ts, '1 hour') FROM t WINDOW w AS (PARTITION BY a)"
    assert normalize(sql).text == (
        "SELECT 'window(' AS s, `window`, __streamt_window (ts, '1 hour') FROM t WINDOW w AS (PARTITION BY a)"
    )
    assert normalize("SELECT a FROM t").text == "SELECT a FROM t"
    import sqlglot

    tree = restore(sqlglot.parse_one(normalize(sql).text, read="spark"))
    assert "window(ts, '1 hour')" in tree.sql("spark").lower()


def test_declared_columns_for_select_star_over_unknown_source() -> None:
    project = analyze_columns(
        {"ev": "SELECT * FROM `events`", "ev2": "SELECT e.user_id, e.kind FROM `ev` e"},
        ["ev", "ev2"],
        {"events": []},
        {"ev": ["user_id", "ts"]},
    )
    ev = project.models["ev"]
    assert ev.columns == ("user_id", "ts")
    assert {k: fmt(v) for k, v in ev.fields.items()} == {
        "user_id": {"events.user_id DIRECT IDENTITY"},
        "ts": {"events.ts DIRECT IDENTITY"},
    }
    assert ev.warnings == ()
    ev2 = project.models["ev2"]
    assert fmt(ev2.fields["kind"]) == {"ev.kind DIRECT IDENTITY"}
    assert ev2.warnings == ("ev2: column 'e.kind' not found: 'ev' has no such column",)


def test_declared_column_not_produced_is_reported() -> None:
    project = analyze_columns({"m": "SELECT id FROM `customers`"}, ["m"], SOURCES, {"m": ["id", "gone"]})
    assert project.models["m"].columns == ("id",)
    assert project.models["m"].warnings == ("m: declared column 'gone' is not in the SELECT output",)


# ------------------------------------------------------------------ project
PROJECT = {
    # keys deliberately not in topological order
    "vip": "SELECT name, CASE WHEN total > 1000 THEN 'vip' ELSE 'regular' END AS segment FROM `customer_totals`",
    "customer_totals": "SELECT s.customer_id, c.name, SUM(s.amount) AS total FROM `stg_all` s "
    "JOIN `customers` c ON s.customer_id = c.id GROUP BY s.customer_id, c.name",
    "stg_all": "SELECT * FROM `stg_orders`",
    "stg_orders": "SELECT order_id, customer_id, CAST(amount AS DOUBLE) AS amount, status FROM `orders` "
    "WHERE status <> 'test'",
}
ORDER = ["stg_orders", "stg_all", "customer_totals", "vip"]


@pytest.fixture(scope="module")
def project() -> ProjectColumnLineage:
    return analyze_columns(PROJECT, ORDER, SOURCES)


def R(ref: str) -> ColumnRef:
    rel, col = ref.split(".")
    return ColumnRef(rel, col)


def S(down: str, up: str, type_: str, subtype: str) -> LineageStep:
    return LineageStep(R(down), R(up), type_, subtype)  # type: ignore[arg-type]


def test_project_models_and_star_through_model(project: ProjectColumnLineage) -> None:
    assert list(project.models) == ["customer_totals", "stg_all", "stg_orders", "vip"]
    assert project.warnings() == []
    stg_all = project.models["stg_all"]
    assert stg_all.columns == ("order_id", "customer_id", "amount", "status")
    assert {k: fmt(v) for k, v in stg_all.fields.items()} == {
        c: {f"stg_orders.{c} DIRECT IDENTITY"} for c in stg_all.columns
    }
    totals = project.models["customer_totals"]
    assert totals.columns == ("customer_id", "name", "total")
    assert fmt(totals.fields["total"]) == {"stg_all.amount DIRECT AGGREGATION"}
    assert fmt(totals.dataset) == {
        "stg_all.customer_id INDIRECT JOIN",
        "customers.id INDIRECT JOIN",
        "stg_all.customer_id INDIRECT GROUP_BY",
        "customers.name INDIRECT GROUP_BY",
    }


def test_upstream_traversal(project: ProjectColumnLineage) -> None:
    hits = project.upstream("vip", "segment")
    assert hits == [
        LineageHit(
            1, R("customer_totals.total"), (S("vip.segment", "customer_totals.total", "INDIRECT", "CONDITIONAL"),)
        ),
        LineageHit(
            2,
            R("stg_all.amount"),
            (
                S("vip.segment", "customer_totals.total", "INDIRECT", "CONDITIONAL"),
                S("customer_totals.total", "stg_all.amount", "DIRECT", "AGGREGATION"),
            ),
        ),
        LineageHit(
            3,
            R("stg_orders.amount"),
            (
                S("vip.segment", "customer_totals.total", "INDIRECT", "CONDITIONAL"),
                S("customer_totals.total", "stg_all.amount", "DIRECT", "AGGREGATION"),
                S("stg_all.amount", "stg_orders.amount", "DIRECT", "IDENTITY"),
            ),
        ),
        LineageHit(
            4,
            R("orders.amount"),
            (
                S("vip.segment", "customer_totals.total", "INDIRECT", "CONDITIONAL"),
                S("customer_totals.total", "stg_all.amount", "DIRECT", "AGGREGATION"),
                S("stg_all.amount", "stg_orders.amount", "DIRECT", "IDENTITY"),
                S("stg_orders.amount", "orders.amount", "DIRECT", "TRANSFORMATION"),
            ),
        ),
    ]
    assert [h.type for h in hits] == ["INDIRECT"] * 4
    assert project.upstream("vip", "segment", direct_only=True) == []
    direct = project.upstream("customer_totals", "total", direct_only=True)
    assert [(h.depth, str(h.ref), h.type) for h in direct] == [
        (1, "stg_all.amount", "DIRECT"),
        (2, "stg_orders.amount", "DIRECT"),
        (3, "orders.amount", "DIRECT"),
    ]


def test_upstream_with_dataset_edges(project: ProjectColumnLineage) -> None:
    hits = project.upstream("stg_orders", "order_id", include_dataset=True)
    assert [(h.depth, str(h.ref), [(s.type, s.subtype) for s in h.path]) for h in hits] == [
        (1, "orders.order_id", [("DIRECT", "IDENTITY")]),
        (1, "orders.status", [("INDIRECT", "FILTER")]),
    ]


def test_downstream_traversal(project: ProjectColumnLineage) -> None:
    hits = project.downstream("orders", "amount")
    assert [(h.depth, str(h.ref), h.type, [s.subtype for s in h.path]) for h in hits] == [
        (1, "stg_orders.amount", "DIRECT", ["TRANSFORMATION"]),
        (2, "stg_all.amount", "DIRECT", ["TRANSFORMATION", "IDENTITY"]),
        (3, "customer_totals.total", "DIRECT", ["TRANSFORMATION", "IDENTITY", "AGGREGATION"]),
        (4, "vip.segment", "INDIRECT", ["TRANSFORMATION", "IDENTITY", "AGGREGATION", "CONDITIONAL"]),
    ]
    assert hits[3].path[-1] == S("vip.segment", "customer_totals.total", "INDIRECT", "CONDITIONAL")
    assert [str(h.ref) for h in project.downstream("orders", "amount", direct_only=True)] == [
        "stg_orders.amount",
        "stg_all.amount",
        "customer_totals.total",
    ]
    with_dataset = project.downstream("customers", "id", include_dataset=True)
    assert [(h.depth, str(h.ref)) for h in with_dataset] == [
        (1, "customer_totals.customer_id"),
        (1, "customer_totals.name"),
        (1, "customer_totals.total"),
        (2, "vip.name"),
        (2, "vip.segment"),
    ]
    assert project.downstream("customers", "id") == []
    assert project.upstream("nope", "x") == []


def test_round_trip_and_cache_key(project: ProjectColumnLineage) -> None:
    data = json.loads(json.dumps(project.to_dict()))
    again = ProjectColumnLineage.from_dict(data)
    assert again.to_dict() == project.to_dict()
    assert again.models == project.models
    assert again.upstream("vip", "segment") == project.upstream("vip", "segment")
    key = lineage_cache_key(PROJECT, SOURCES)
    assert len(key) == 64
    assert key == lineage_cache_key(dict(reversed(list(PROJECT.items()))), SOURCES, {})
    assert key != lineage_cache_key(PROJECT, {**SOURCES, "events": ["x"]})
    assert key != lineage_cache_key(PROJECT, SOURCES, {"vip": ["name"]})
    with pytest.raises(ValueError):
        ProjectColumnLineage.from_dict({"format": 999, "models": {}})


def test_model_missing_from_order_is_analyzed_last_with_warning() -> None:
    project = analyze_columns({"a": "SELECT id FROM `customers`", "b": "SELECT * FROM `a`"}, ["b"], SOURCES)
    assert project.models["b"].columns == ()
    assert project.models["a"].warnings == ("a: model is not in the topological order; analyzed last",)


def test_module_imports_neither_dagster_nor_pyspark() -> None:
    code = (
        "import sys; import dagster_streamt.lineage.columns; "
        "print(any(m.split('.')[0] in ('dagster', 'pyspark') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
