"""StreamtProjectComponent in a defs folder (Dagster's own component sandbox): scaffolding with and
without a project, `project:` paths and templates, dagster-dbt's `translation:` attributes reaching
keys, dependencies, checks and the key map, select/exclude, the `spark:` attribute (overrides or a
dagster-pyspark resource from a template var), and clear errors."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from dagster.components.testing import DefsFolderSandbox, create_defs_folder_sandbox

from dagster_streamt import StreamtProjectComponent
from dagster_streamt.dagster import StreamtTranslator
from dagster_streamt.dagster.key_map import KeyMap
from dagster_streamt.dagster.resources import SparkResource
from dagster_streamt.spec.models import Model

from ..helpers import write_project

SHOP = {
    "stream_project.yml": "project: {name: shop}\n",
    "sources/s.yml": """\
        sources:
          - name: orders
            format: json
            path: data/orders
            columns: [{name: id, type: bigint}, {name: amount, type: double}]
        """,
    "models/m.yml": """\
        models:
          - name: orders_clean
            materialized: stream
            tags: [orders, pii]
            owner: data-eng
            sql: SELECT id, amount FROM {{ source("orders") }} WHERE amount > 0
          - name: revenue
            materialized: table
            tags: [finance]
            sql: SELECT sum(amount) AS total FROM {{ ref("orders_clean") }}
        """,
    "tests/t.yml": "tests:\n  - name: clean_ids\n    model: orders_clean\n"
                   "    assertions: [{not_null: {columns: [id]}}]\n",
    "exposures/e.yml": "exposures:\n  - {name: board, type: dashboard, owner: ops, consumes: [{ref: revenue}]}\n",
}


@pytest.fixture
def sandbox() -> Iterator[DefsFolderSandbox]:
    with create_defs_folder_sandbox(project_name="streamt_sandbox") as box:
        yield box


def shop(box: DefsFolderSandbox) -> Path:
    return write_project(box.project_root / "shop", dict(SHOP))


def component(box: DefsFolderSandbox, attributes: dict[str, Any], name: str = "shop") -> Path:
    path = box.defs_folder_path / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "defs.yaml").write_text(yaml.safe_dump({"type": "dagster_streamt.StreamtProjectComponent",
                                                    "attributes": attributes}, sort_keys=False))
    return path


def keys_of(defs: dg.Definitions) -> list[str]:
    return sorted(k.to_user_string() for k in defs.resolve_all_asset_keys())


def test_scaffold_points_at_an_existing_project(sandbox: DefsFolderSandbox) -> None:
    shop(sandbox)
    path = sandbox.scaffold_component(StreamtProjectComponent, "shop",
                                      scaffold_params={"project_path": str(sandbox.project_root / "shop")})
    written = yaml.safe_load((path / "defs.yaml").read_text())  # `dg scaffold defs` writes the same (test_dg_cli)
    assert written["attributes"] == {"project": "{{ context.project_root }}/shop"}
    with sandbox.load_component_and_build_defs(defs_path=path) as (loaded, defs):
        assert isinstance(loaded, StreamtProjectComponent) and loaded.project == str(sandbox.project_root / "shop")
        assert keys_of(defs) == ["exposures/board", "orders_clean", "revenue", "sources/orders"]
    with pytest.raises(FileNotFoundError, match=r"no stream_project\.yml"):
        sandbox.scaffold_component(StreamtProjectComponent, "nope",
                                   scaffold_params={"project_path": str(sandbox.project_root)})


def test_scaffold_without_a_project_writes_a_starter_that_loads(sandbox: DefsFolderSandbox) -> None:
    path = sandbox.scaffold_component(StreamtProjectComponent, "starter")
    assert yaml.safe_load((path / "defs.yaml").read_text())["attributes"] == {"project": "."}
    assert sorted(p.name for p in path.iterdir()) == ["defs.yaml", "models", "stream_project.yml", "tests"]
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        assert keys_of(defs) == ["hello"]
        check = next(iter(defs.resolve_asset_graph().asset_check_keys))
        assert check == dg.AssetCheckKey(dg.AssetKey("hello"), "hello_ids")


def test_translation_reaches_keys_deps_checks_and_the_key_map(sandbox: DefsFolderSandbox) -> None:
    shop(sandbox)
    path = component(sandbox, {
        "project": "../../../../shop",  # relative to the defs.yaml folder
        "translation": {
            "key": "lake/{{ node.type }}/{{ node.name }}",
            "group_name": "{{ 'pii' if 'pii' in node.tags else 'analytics' }}",
            "owners": ["team:{{ node.owner or 'platform' }}"],
            "tags": {"layer": "{{ node.materialized or node.type }}"},
            "kinds": ["spark", "streamt"],
            "metadata": {"origin": "{{ node.unique_id }}"},
        }})
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        assert keys_of(defs) == ["lake/exposure/board", "lake/model/orders_clean", "lake/model/revenue",
                                 "lake/source/orders"]
        graph = defs.resolve_asset_graph()
        clean, revenue = dg.AssetKey(["lake", "model", "orders_clean"]), dg.AssetKey(["lake", "model", "revenue"])
        assert graph.get(revenue).parent_keys == {clean}
        assert graph.get(clean).parent_keys == {dg.AssetKey(["lake", "source", "orders"])}
        assert graph.get(dg.AssetKey(["lake", "exposure", "board"])).parent_keys == {revenue}
        specs = {s.key: s for s in defs.resolve_all_asset_specs()}
        assert (specs[clean].group_name, specs[revenue].group_name) == ("pii", "analytics")
        assert specs[clean].owners == ["team:data-eng"] and specs[revenue].owners == ["team:platform"]
        assert specs[clean].tags["layer"] == "stream" and specs[revenue].tags["layer"] == "table"
        assert "orders" in specs[clean].tags  # translation tags merge with the project's, as in dagster-dbt
        assert set(specs[clean].kinds) == {"spark", "streamt"}
        assert specs[revenue].metadata["origin"] == "model.revenue" and "sql" in specs[revenue].metadata
        lineage = specs[revenue].metadata["dagster/column_lineage"]
        assert {d.asset_key for deps in lineage.deps_by_column.values() for d in deps} == {clean}
        assert graph.asset_check_keys == {dg.AssetCheckKey(clean, "clean_ids")}
        keys = KeyMap.from_definitions(defs, "shop")
        assert keys is not None and keys.model("revenue") == revenue and keys.model_of(clean) == "orders_clean"


def test_key_prefix_prefixes_once_and_python_subclasses_change_the_base(sandbox: DefsFolderSandbox) -> None:
    root = shop(sandbox)
    path = component(sandbox, {"project": str(root), "translation": {"key_prefix": "streamt"}})
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        assert keys_of(defs) == ["streamt/exposures/board", "streamt/orders_clean", "streamt/revenue",
                                 "streamt/sources/orders"]

    class Namespaced(StreamtProjectComponent):
        def get_translator(self) -> StreamtTranslator:
            class T(StreamtTranslator):
                def get_model_key(self, model: Model) -> dg.AssetKey:
                    return dg.AssetKey(["shop", model.name])

            return T("shop")

    defs = Namespaced(project=str(root), translation=None).build_defs(None)  # type: ignore[arg-type]
    assert keys_of(defs) == ["exposures/board", "shop/orders_clean", "shop/revenue", "sources/orders"]


def test_select_exclude_and_env(sandbox: DefsFolderSandbox) -> None:
    root = shop(sandbox)
    (root / "environments").mkdir()
    (root / "environments" / "prod.yml").write_text("runtime: {spark: {master: 'local[1]'}}\n")
    path = component(sandbox, {"project": str(root), "select": "tag:orders+", "exclude": "revenue", "env": "prod"})
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        assert keys_of(defs) == ["orders_clean", "sources/orders"]
        keys = KeyMap.from_definitions(defs, "shop")
        assert keys is not None and keys.env == "prod" and keys.assets == {"orders_clean"}


def test_spark_attribute_overrides_or_takes_a_pyspark_resource(sandbox: DefsFolderSandbox) -> None:
    root = shop(sandbox)
    path = component(sandbox, {"project": str(root), "spark": {"master": "local[1]", "conf": {"spark.x": "1"}}})
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        resource = defs.resources["spark"]
        assert isinstance(resource, SparkResource)
        assert (resource.master, resource.conf) == ("local[1]", {"spark.x": "1"})

    path = component(sandbox, {"project": str(root), "spark": "{{ team_pyspark }}"}, name="with_pyspark")
    (path / "defs.yaml").write_text("template_vars_module: .template_vars\n" + (path / "defs.yaml").read_text())
    (path / "template_vars.py").write_text(textwrap.dedent("""\
        import dagster as dg
        from dagster_pyspark import LazyPySparkResource


        @dg.template_var
        def team_pyspark():
            return LazyPySparkResource(spark_config={"spark": {"executor": {"memory": "2g"}}, "spark.x": True})
        """))
    (path / "__init__.py").write_text("")
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        resource = defs.resources["spark"]
        assert isinstance(resource, SparkResource)
        assert resource.base_conf == {"spark.executor.memory": "2g", "spark.x": "true"}


def load_error(box: DefsFolderSandbox, path: Path) -> str:
    """Every message of the exception chain Dagster raises while loading the component."""
    with pytest.raises(Exception) as info, box.load_component_and_build_defs(defs_path=path):
        pass
    texts, exc = [], info.value
    while exc is not None:
        texts.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    return "\n".join(texts)


def test_errors_name_the_file_and_the_fix(sandbox: DefsFolderSandbox) -> None:
    path = component(sandbox, {"project": "missing"})
    assert f"{path / 'defs.yaml'}: project {path / 'missing'} has no stream_project.yml" in load_error(sandbox, path)
    broken = write_project(sandbox.project_root / "broken", {
        "stream_project.yml": "project: {name: b}\n",
        "models/m.yml": "models:\n  - name: m\n    materialised: table\n    sql: SELECT 1 AS x\n"})
    path = component(sandbox, {"project": str(broken)}, name="broken")
    message = load_error(sandbox, path)
    assert f"{path / 'defs.yaml'}: streamt project {broken}: 1 error(s) in project:" in message, message
    assert "models/m.yml:3: error STR010: model 'm': unknown key 'materialised'" in message
    assert 'did you mean "materialized"' in message
    path = component(sandbox, {"project": str(broken), "selct": "x"}, name="typo")
    assert "selct" in load_error(sandbox, path)


def test_the_guide_defs_yaml_loads_the_example_project(sandbox: DefsFolderSandbox) -> None:
    readme = (Path(__file__).parents[2] / "docs" / "dagster" / "component.md").read_text()
    block = readme.split("The\n`defs.yaml` takes dagster-dbt's conventions:\n\n```yaml\n", 1)[1].split("```", 1)[0]
    example = Path(__file__).parents[2] / "project"
    shutil.copytree(example, sandbox.project_root / "shop",
                    ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports", "definitions.py"))
    path = sandbox.defs_folder_path / "shop"
    path.mkdir()
    (path / "defs.yaml").write_text(block)
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        keys = keys_of(defs)
        assert "streamt/model/orders_clean" in keys and "streamt/source/orders_raw" in keys
        assert all(k.startswith("streamt/") for k in keys)
        specs = {s.key.to_user_string(): s for s in defs.resolve_all_asset_specs()}
        assert specs["streamt/model/order_metrics"].tags["layer"] == "stream"
        assert specs["streamt/model/orders_clean"].metadata["origin"] == "model.orders_clean"
        assert defs.resources["spark"].master == "spark://spark-master:7077"
        stored = KeyMap.from_definitions(defs, "shop")
        assert stored is not None and stored.env == "prod" and "orders_clean" in stored.assets
