"""Column lineage as users see it: CLI views, PII propagation and the masking rule, Dagster metadata."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.lineage.project_columns import column_lineage, propagate_classification

from ..helpers import EXAMPLE, streamt, write_project

PII = {
    "stream_project.yml": """\
        project: {name: pii}
        rules:
          security: {sensitive_columns_require_masking: true}
        """,
    "sources/users.yml": """\
        sources:
          - name: users
            format: json
            path: data/users
            columns:
              - {name: user_id, type: bigint, classification: internal}
              - {name: email, type: string, classification: sensitive}
              - {name: country, type: string, classification: public}
        """,
    "models/m.yml": """\
        models:
          - name: users_clean
            sql: SELECT user_id, lower(email) AS email_norm, country FROM {{ source("users") }}
          - name: users_enriched
            sql: |
              SELECT u.*, length(u.email_norm) AS email_len
              FROM {{ ref("users_clean") }} AS u
          - name: by_country
            sql: SELECT country, count(*) AS n FROM {{ ref("users_enriched") }} GROUP BY country
          - name: users_masked
            security:
              policies: [{mask: {column: email_norm, method: hash}}]
            sql: SELECT user_id, sha2(email_norm, 256) AS email_norm FROM {{ ref("users_enriched") }}
        """,
    "exposures/e.yml": """\
        exposures:
          - {name: crm_export, type: application, owner: crm, consumes: [{ref: users_enriched}]}
          - {name: country_dash, type: dashboard, consumes: [{ref: by_country}]}
          - {name: partner_feed, type: application, consumes: [{ref: users_masked}]}
        """,
}


def test_pii_flows_through_models_to_exposures_and_the_rule_fires(tmp_path: Path) -> None:
    write_project(tmp_path, dict(PII))
    loaded = load(tmp_path, use_cache=False)
    report = propagate_classification(loaded, column_lineage(loaded))
    sensitive = sorted(f"{c.relation}.{c.column}" for c in report.columns if "sensitive" in c.classes)
    # SELECT u.* was expanded from users_clean's columns; email_len derives from email too.
    assert sensitive == ["users.email", "users_clean.email_norm", "users_enriched.email_len",
                         "users_enriched.email_norm"]
    assert [f"{c.relation}.{c.column}" for c in report.exposures["crm_export"] if "sensitive" in c.classes] == [
        "users_enriched.email_len", "users_enriched.email_norm"]
    assert "country_dash" not in report.exposures or all(
        "sensitive" not in c.classes for c in report.exposures["country_dash"])
    # masked: the sensitive flow stops at users_masked; only the internal id reaches the partner feed
    assert [(c.column, c.classes) for c in report.exposures["partner_feed"]] == [("user_id", ("internal",))]
    gov = [d for d in loaded.findings if d.code == "GOV302"]
    assert [d.message for d in gov] == [
        "model 'users_enriched' passes sensitive column 'email_len' (from users.email) to exposure 'crm_export' "
        "unmasked",
        "model 'users_enriched' passes sensitive column 'email_norm' (from users.email) to exposure 'crm_export' "
        "unmasked",
    ]
    assert gov[0].file == "models/m.yml" and gov[0].line == 4


def test_cli_classification_view(tmp_path: Path) -> None:
    write_project(tmp_path, dict(PII))
    r = streamt("lineage", "-p", str(tmp_path), "--classification", "sensitive")
    # the project breaks its own masking rule: lineage still answers, and says so on stderr
    assert r.returncode == 0 and "GOV302" not in r.stdout and "governance finding" in r.stderr
    (tmp_path / "stream_project.yml").write_text("project: {name: pii}\n")
    r = streamt("lineage", "-p", str(tmp_path), "--classification", "sensitive")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "  crm_export: users_enriched.email_len, users_enriched.email_norm" in r.stdout
    doc = json.loads(streamt("lineage", "-p", str(tmp_path), "--classification", "sensitive",
                             "--format", "json").stdout)
    assert doc["exposures"]["crm_export"] == ["users_enriched.email_len", "users_enriched.email_norm"]


def test_cli_column_upstream_and_downstream() -> None:
    r = streamt("lineage", "-p", str(EXAMPLE), "--column", "customer_orders.total_spent", "--upstream")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Column lineage for: customer_orders.total_spent",
        "Upstream:",
        "  └── orders_clean.amount  (DIRECT AGGREGATION)",
        "      └── orders_raw.amount  (DIRECT IDENTITY) [source]",
    ]
    r = streamt("lineage", "-p", str(EXAMPLE), "-c", "orders_raw.amount", "--downstream", "--format", "json")
    doc = json.loads(r.stdout)
    reached = sorted(f"{h['relation']}.{h['column']}" for h in doc["downstream"])
    assert reached == ["customer_orders.total_spent", "daily_revenue.revenue", "high_value_orders.amount",
                       "order_metrics.revenue",
                       "orders_clean.amount", "orders_export.amount"]
    mm = streamt("lineage", "-p", str(EXAMPLE), "-c", "orders_clean.amount", "--format", "mermaid").stdout
    assert mm.startswith("graph LR") and "-->|DIRECT AGGREGATION|" in mm
    bad = streamt("lineage", "-p", str(EXAMPLE), "-c", "order_metrics.revnue")
    assert bad.returncode == 2 and 'did you mean "revenue"' in bad.stderr


def test_cli_model_columns() -> None:
    r = streamt("lineage", "-p", str(EXAMPLE), "-m", "customer_orders", "--columns")
    assert r.returncode == 0
    assert "  total_spent    <- orders_clean.amount (DIRECT AGGREGATION)" in r.stdout
    assert "  orders_clean.customer_id (INDIRECT JOIN)" in r.stdout


def test_dagster_column_lineage_metadata_at_definition_time() -> None:
    graph = build_definitions(EXAMPLE).resolve_asset_graph()
    cl = graph.get(dg.AssetKey(["customer_orders"])).metadata["dagster/column_lineage"]
    assert cl.deps_by_column["total_spent"] == [
        dg.TableColumnDep(asset_key=dg.AssetKey(["orders_clean"]), column_name="amount")]
    assert cl.deps_by_column["country"] == [
        dg.TableColumnDep(asset_key=dg.AssetKey(["sources", "customers"]), column_name="country")]
    schema = graph.get(dg.AssetKey(["orders_export"])).metadata["dagster/column_schema"]
    assert [(c.name, c.type) for c in schema.columns][:3] == [
        ("order_id", "bigint"), ("customer_id", "bigint"), ("amount", "double")]
