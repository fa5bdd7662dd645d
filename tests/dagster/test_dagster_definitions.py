"""The example project as a Dagster code location (no Spark needed to load it)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from dagster_streamt.dagster import StreamtTranslator, build_definitions
from dagster_streamt.spec.errors import ProjectError

from ..helpers import write_project

EXAMPLE = Path(__file__).parents[2] / "project"


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    return build_definitions(EXAMPLE)


def test_definitions_load(defs: dg.Definitions) -> None:
    dg.Definitions.validate_loadable(defs)
    keys = sorted(k.to_user_string() for k in defs.resolve_all_asset_keys())
    assert keys == ["customer_orders", "daily_revenue", "exposures/billing_service", "exposures/ops_dashboard",
                    "high_value_orders",
                    "order_metrics", "orders_clean", "orders_export", "sources/customers", "sources/orders_raw"]


def test_model_spec_attributes(defs: dg.Definitions) -> None:
    graph = defs.resolve_asset_graph()
    node = graph.get(dg.AssetKey(["customer_orders"]))
    assert node.group_name == "shop"
    assert node.owners == ["team:analytics"]
    assert set(node.kinds) == {"spark", "table"}
    assert set(node.tags) >= {"customers", "orders"}
    assert node.code_version and len(node.code_version) == 16
    assert {k.to_user_string() for k in node.parent_keys} == {"orders_clean", "sources/customers"}
    md = node.metadata
    assert md["dagster/table_name"] == "shop.customer_orders"
    cols = [c.name for c in md["dagster/column_schema"].columns]
    assert cols == ["customer_id", "country", "order_count", "total_spent", "last_order_at"]
    assert "LEFT JOIN `orders_clean`" in node.description


def test_sources_and_exposures_in_the_lineage(defs: dg.Definitions) -> None:
    graph = defs.resolve_asset_graph()
    dash = graph.get(dg.AssetKey(["exposures", "ops_dashboard"]))
    assert {k.to_user_string() for k in dash.parent_keys} == {"order_metrics"}
    assert set(dash.kinds) == {"dashboard"} and dash.owners == ["team:ops"]
    src = graph.get(dg.AssetKey(["sources", "orders_raw"]))
    assert set(src.kinds) == {"json"} and not src.is_executable
    schema = src.metadata["dagster/column_schema"]
    assert [c.name for c in schema.columns][:2] == ["order_id", "customer_id"]
    assert graph.get(dg.AssetKey(["orders_clean"])).is_executable


def test_code_version_changes_with_sql(tmp_path: Path) -> None:
    files = {"sources/s.yml": "sources:\n  - name: s\n    format: json\n    path: d\n    columns: [{name: a}]\n",
             "models/m.yml": "models:\n  - name: m\n    sql: SELECT a FROM {{ source('s') }}\n"}
    write_project(tmp_path, files)
    v1 = build_definitions(tmp_path).resolve_asset_graph().get(dg.AssetKey(["m"])).code_version
    (tmp_path / "models" / "m.yml").write_text(
        "models:\n  - name: m\n    sql: SELECT a + 1 AS a FROM {{ source('s') }}\n")
    v2 = build_definitions(tmp_path).resolve_asset_graph().get(dg.AssetKey(["m"])).code_version
    assert v1 != v2


def test_custom_translator(tmp_path: Path) -> None:
    class Prefixed(StreamtTranslator):
        def get_model_key(self, model):  # type: ignore[no-untyped-def]
            return dg.AssetKey(["warehouse", model.name])

    defs = build_definitions(EXAMPLE, translator=Prefixed("shop"))
    keys = {k.to_user_string() for k in defs.resolve_all_asset_keys()}
    assert "warehouse/orders_clean" in keys
    dash = defs.resolve_asset_graph().get(dg.AssetKey(["exposures", "ops_dashboard"]))
    assert {k.to_user_string() for k in dash.parent_keys} == {"warehouse/order_metrics"}


def test_invalid_project_fails_the_code_location_with_every_error(tmp_path: Path) -> None:
    write_project(tmp_path, {"models/m.yml": "models:\n  - name: m\n    sql: SELECT x FROM {{ ref('a') }}\n"
                                             "  - name: n\n    sql: SELECT x FROM {{ ref('b') }}\n"})
    with pytest.raises(ProjectError) as exc:
        build_definitions(tmp_path)
    assert [d.code for d in exc.value.diagnostics if d.is_error] == ["REF001", "REF001"]


def test_full_refresh_is_typed_run_config(defs: dg.Definitions) -> None:
    """Full refresh travels as the ``run_options`` resource's config: the launchpad shows its schema, a
    selection spanning several model ops takes one entry, and a misspelt model fails the run (before
    Spark starts) with a did-you-mean instead of running without the refresh asked for."""
    job = defs.resolve_implicit_global_asset_job_def()
    resources = job.run_config_schema.config_type.fields["resources"].config_type.fields
    assert "full_refresh" in resources["run_options"].config_type.fields["config"].config_type.fields
    config = {"resources": {"run_options": {"config": {"full_refresh": ["orders_clen", "nothing_like_it"]}}}}
    result = job.execute_in_process(run_config=config, asset_selection=[dg.AssetKey(["orders_clean"])],
                                    raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    message = failure.step_failure_data.error.message if failure.step_failure_data.error else ""
    assert "resources.run_options.config.full_refresh" in message
    assert "'orders_clen': did you mean \"orders_clean\"?" in message
    assert "'nothing_like_it': no such model" in message


def test_code_version_ignores_what_changes_no_row(tmp_path: Path) -> None:
    """A description, owner or freshness edit leaves the model synced (`streamt plan` calls it metadata);
    a setting that decides rows does not."""
    files = {"sources/s.yml": "sources:\n  - name: s\n    format: json\n    path: d\n    columns: [{name: a}]\n",
             "models/m.yml": "models:\n  - name: m\n    sql: SELECT a FROM {{ source('s') }}\n"}
    write_project(tmp_path, files)

    def version() -> str | None:
        return build_definitions(tmp_path).resolve_asset_graph().get(dg.AssetKey(["m"])).code_version

    v1 = version()
    (tmp_path / "models" / "m.yml").write_text(
        "models:\n  - name: m\n    description: the a column\n    owner: data\n    group: g\n"
        "    freshness: {warn_after: 1h}\n    sql: SELECT a FROM {{ source('s') }}\n")
    assert version() == v1
    (tmp_path / "models" / "m.yml").write_text(
        "models:\n  - name: m\n    key: a\n    sql: SELECT a FROM {{ source('s') }}\n")
    assert version() != v1
