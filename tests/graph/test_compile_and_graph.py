"""Compiling SQL (sandboxed Jinja + sqlglot) and the graph built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.api import load
from dagster_streamt.graph.impact import impact
from dagster_streamt.graph.select import SelectionError, select

from ..helpers import write_project

SRC = """\
sources:
  - name: orders
    format: json
    path: data/orders
    columns: [{name: id, type: bigint}, {name: ts, type: timestamp}, {name: amount, type: double}]
"""


def test_sql_syntax_error_points_at_the_yaml_line(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: good
            sql: SELECT id FROM {{ source("orders") }}
          - name: bad
            sql: |
              SELECT id,
                amount
              FROM {{ source("orders") }}
              WHERE amount >> ) 3
        """})
    loaded = load(tmp_path, use_cache=False)
    err = next(d for d in loaded.errors if d.code == "SQL001")
    assert err.file == "models/m.yml"
    assert err.line == 9  # the WHERE line inside the block scalar
    assert "model 'bad'" in err.message
    assert [d.code for d in loaded.errors] == ["SQL001"]


def test_unknown_ref_and_source_get_did_you_mean(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: orders_clean
            sql: SELECT id FROM {{ source("order") }}
          - name: metrics
            sql: |
              SELECT count(*) AS n
              FROM {{ ref("orders_cleen") }}
          - name: mixed
            sql: SELECT id FROM {{ ref("orders") }}
        """})
    loaded = load(tmp_path, use_cache=False)
    by_code = {d.code: d for d in loaded.errors}
    assert by_code["REF002"].hint == 'did you mean "orders"?'
    assert by_code["REF002"].line == 3
    assert by_code["REF001"].line in (7, 9)
    refs = [d for d in loaded.errors if d.code == "REF001"]
    assert {d.line for d in refs} == {7, 9}
    assert any("that name is a source: use source()" in d.message for d in refs)
    assert any(d.hint == 'did you mean "orders_clean"?' for d in refs)


def test_template_errors_and_vars(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": "project: {name: t}\nvars: {threshold: 10}\n",
                             "sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: a
            sql: SELECT id FROM {{ source("orders") }} WHERE amount > {{ var("threshold") }}
          - name: b
            sql: |
              SELECT id
              FROM {{ source("orders") }}
              WHERE amount > {{ var("treshold") }}
          - name: c
            sql: |
              SELECT id FROM {{ source("orders") }}
              {% if %}
          - name: d
            sql: SELECT id FROM {{ source("orders") }} {{ "".__class__.__mro__[1].__subclasses__() }}
        """})
    loaded = load(tmp_path, use_cache=False)
    assert loaded.compiled.models["a"].sql == "SELECT id FROM `orders` WHERE amount > 10"
    unknown = next(d for d in loaded.errors if d.code == "STR031")
    assert unknown.line == 8 and unknown.hint == 'did you mean "threshold"?'
    templ = sorted(d for d in loaded.errors if d.code == "SQL002")
    assert [d.line for d in templ] == [12, 14]  # syntax error line; sandbox refuses the escape
    assert "unsafe" in templ[1].message or "access" in templ[1].message


def test_env_var_in_sql_and_secrets_never_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGION", "eu")
    monkeypatch.setenv("DB_PASSWORD", "hunter2-secret")
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: a
            sql: SELECT id FROM {{ source("orders") }} WHERE '{{ env_var("REGION") }}' = 'eu'
          - name: out
            from: a
            sink:
              format: jdbc
              options:
                url: jdbc:postgresql://db/x
                dbtable: out
                password: ${DB_PASSWORD}
        """})
    loaded = load(tmp_path, use_cache=False)
    assert not loaded.errors
    assert "'eu' = 'eu'" in loaded.compiled.models["a"].sql
    assert loaded.project.models["out"].sink.options["password"] == "hunter2-secret"
    from dagster_streamt.manifest import write_manifest

    path = write_manifest(loaded)
    text = path.read_text()
    assert "hunter2-secret" not in text and '"password": "***"' in text


def test_window_group_by_is_accepted(tmp_path: Path) -> None:
    """sqlglot cannot parse GROUP BY window(...); Spark can, so the model must not be rejected."""
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: w
            sql: |
              SELECT window.start AS ws, count(*) AS n
              FROM {{ source("orders") }}
              GROUP BY window(ts, '1 hour')
        """})
    loaded = load(tmp_path, use_cache=False)
    assert not loaded.errors
    cm = loaded.compiled.models["w"]
    assert cm.output_columns == ("ws", "n")
    assert cm.features is not None and cm.features.windows == ("window",) and cm.features.stateful
    assert "GROUP BY window(ts, '1 hour')" in cm.sql  # Spark runs the original SQL


def test_every_cycle_is_reported(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: a
            sql: SELECT id FROM {{ ref("b") }} JOIN {{ source("orders") }} USING (id)
          - name: b
            sql: SELECT id FROM {{ ref("a") }}
          - name: c
            sql: SELECT id FROM {{ ref("d") }}
          - name: d
            sql: SELECT id FROM {{ ref("e") }}
          - name: e
            sql: SELECT id FROM {{ ref("c") }} UNION ALL SELECT id FROM {{ ref("d") }}
          - name: f
            sql: SELECT id FROM {{ ref("f") }}
        """})
    loaded = load(tmp_path, use_cache=False)
    cycles = sorted(d.message for d in loaded.errors if d.code == "REF006")
    assert cycles == [
        "dependency cycle: a -> b -> a",
        "dependency cycle: c -> e -> d -> c",
        "dependency cycle: d -> e -> d",
        "dependency cycle: f -> f",
    ]


def test_tests_and_exposures_on_missing_nodes(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC,
                             "models/m.yml": "models:\n  - name: clean\n"
                                             "    sql: SELECT id FROM {{ source('orders') }}\n",
                             "tests/t.yml": """\
        tests:
          - name: t1
            model: claen
            assertions: [{not_null: {columns: [id]}}]
          - name: t2
            source: ordrs
            assertions: [{not_null: {columns: [id]}}]
        """, "exposures/e.yml": """\
        exposures:
          - name: dash
            type: dashboard
            consumes: [{ref: clen}, {source: orders}]
            depends_on: [nothing_here]
        """})
    loaded = load(tmp_path, use_cache=False)
    got = sorted((d.code, d.file, d.line, d.hint) for d in loaded.errors)
    assert ("REF003", "tests/t.yml", 3, 'did you mean "clean"?') in got
    assert ("REF003", "tests/t.yml", 6, 'did you mean "orders"?') in got
    assert ("REF004", "exposures/e.yml", 4, 'did you mean "clean"?') in got
    assert any(c == "REF004" and "nothing_here" for c, *_ in got)
    assert len([g for g in got if g[0] == "REF004"]) == 2


def test_invalid_cron_and_schedule_selection(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": """\
        project: {name: t}
        schedules:
          - {name: ok, cron: "0 * * * *", select: "tag:x"}
          - {name: bad, cron: "61 * * * *", select: "clean+"}
          - {name: six, cron: "0 0 * * * *", select: "nope"}
        """, "sources/s.yml": SRC,
        "models/m.yml": "models:\n  - name: clean\n    tags: [x]\n    sql: SELECT id FROM {{ source('orders') }}\n"})
    loaded = load(tmp_path, use_cache=False)
    got = sorted((d.code, d.line) for d in loaded.errors)
    assert got == [("REF008", 5), ("STR050", 4), ("STR050", 5)]


def test_governance_rules(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": """\
        project: {name: t}
        rules:
          models: {require_description: true, require_owner: true, require_tests: true,
                   naming_pattern: "^stg_", max_dependencies: 1, allowed_materializations: [table]}
          sources: {require_columns: true, require_description: true, require_owner: true,
                    require_freshness: true}
          security: {require_classification: true}
        """, "sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: stg_ok
            description: fine
            owner: me
            materialized: table
            sql: SELECT id FROM {{ source("orders") }}
          - name: Bad
            materialized: view
            sql: SELECT id FROM {{ ref("stg_ok") }} JOIN {{ source("orders") }} USING (id)
        """, "tests/t.yml": "tests:\n  - name: t\n    model: stg_ok\n    assertions: [{not_null: {columns: [id]}}]\n"})
    loaded = load(tmp_path, use_cache=False)
    got = sorted({d.code for d in loaded.findings})
    assert got == ["GOV101", "GOV102", "GOV103", "GOV104", "GOV105", "GOV106",
                   "GOV202", "GOV203", "GOV204", "GOV301"]
    assert all("Bad" in d.message for d in loaded.findings if d.code.startswith("GOV1"))
    assert not loaded.errors  # governance findings fail `streamt validate` but leave the project usable


def _shop() -> object:
    return load(Path(__file__).parents[2] / "project", use_cache=False)


def test_graph_order_levels_closures_and_typed_ids() -> None:
    g = _shop().graph
    models = g.of_type("model")
    assert g.topological_order(models)[0] == "model.orders_clean"
    assert g.execution_levels(models) == [
        ["model.orders_clean"],
        ["model.customer_orders", "model.daily_revenue", "model.high_value_orders", "model.order_metrics",
         "model.orders_export"],
    ]
    assert g.upstream("exposure.billing_service") == {
        "model.customer_orders", "model.orders_clean", "source.customers", "source.orders_raw"}
    assert "exposure.ops_dashboard" in g.downstream("source.orders_raw")
    assert set(g.nodes) >= {"test.orders_clean_quality", "source.orders_raw", "exposure.ops_dashboard"}


def test_run_plan_of_a_selection_by_name() -> None:
    """The one run plan the CLI, the Dagster assets and the Flink reference run from: models by name,
    upstream models only (sources are read, not run), and a model outside the selection counts as built."""
    g = _shop().graph
    plan = g.run_plan(["order_metrics", "orders_clean", "customer_orders"])
    assert plan.order == ("orders_clean", "customer_orders", "order_metrics")
    assert plan.levels == (("orders_clean",), ("customer_orders", "order_metrics"))
    assert plan.upstream == {"orders_clean": frozenset(), "customer_orders": frozenset({"orders_clean"}),
                             "order_metrics": frozenset({"orders_clean"})}
    alone = g.run_plan(["customer_orders"])
    assert alone.levels == (("customer_orders",),) and alone.upstream["customer_orders"] == {"orders_clean"}
    assert g.upstream_models("orders_clean") == frozenset()  # it reads sources only


def test_graph_doctests() -> None:
    import doctest

    from dagster_streamt.graph import graph as graph_module

    failed, tried = doctest.testmod(graph_module)
    assert failed == 0 and tried >= 5


def test_equal_names_never_collide(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: report
            sql: SELECT id FROM {{ source("orders") }}
        """, "exposures/e.yml": "exposures:\n  - name: report\n    consumes: [{ref: report}]\n",
        "tests/t.yml": "tests:\n  - name: report\n    model: report\n    assertions: [{not_null: {columns: [id]}}]\n"})
    g = load(tmp_path, use_cache=False).graph
    assert {"model.report", "exposure.report", "test.report"} <= set(g.nodes)
    assert g.downstream("model.report") == {"exposure.report", "test.report"}
    assert g.resolve("report") == "model.report"


def test_selection_syntax() -> None:
    g = _shop().graph
    assert select(g, "orders_clean") == ["model.orders_clean"]
    assert select(g, "+customer_orders") == ["model.customer_orders", "model.orders_clean"]
    assert select(g, "order_metrics+", types=None) == ["exposure.ops_dashboard", "model.order_metrics"]
    assert select(g, "tag:metrics owner:risk-team") == ["model.high_value_orders", "model.order_metrics"]
    assert select(g, "materialized:stream,orders_export") == [
        "model.order_metrics", "model.orders_clean", "model.orders_export"]
    assert select(g, "order*") == ["model.order_metrics", "model.orders_clean", "model.orders_export"]
    assert select(g, "source:orders_raw+") == select(g, "orders_clean+")
    with pytest.raises(SelectionError, match='did you mean "orders_clean"'):
        select(g, "orders_clen")
    with pytest.raises(SelectionError, match="unknown selector method 'tga'"):
        select(g, "tga:x")


def test_impact() -> None:
    g = _shop().graph
    imp = impact(g, "model.orders_clean")
    assert imp.models == ("model.customer_orders", "model.daily_revenue", "model.high_value_orders",
                          "model.order_metrics")
    assert imp.sinks == ("model.orders_export",)
    assert imp.exposures == ("exposure.billing_service", "exposure.ops_dashboard")
    assert imp.owners == ("analytics", "billing-team", "finance-eng", "ops", "risk-team")
