"""One key map: a translator subclass changes every key the code location defines (specs, deps,
checks, schedules, sensors, column lineage), the map is stored in the definitions' metadata and read
back by the CLI's code-location lookup (definitions.py, a dg project, or the default)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.dagster import StreamtTranslator, build_definitions
from dagster_streamt.dagster.code_location import CodeLocationError, code_location
from dagster_streamt.dagster.key_map import KeyMap, KeyMapError
from dagster_streamt.spec.models import Model, Source
from dagster_streamt.spec.models import Test as DataTest

from ..helpers import write_project

FILES = {
    "stream_project.yml": """\
        project: {name: shop-v1}
        schedules:
          - {name: hourly-clean, cron: "0 * * * *", select: clean+}
        """,
    "sources/s.yml": """\
        sources:
          - name: events
            format: json
            path: data
            columns: [{name: id, type: bigint}, {name: v, type: double}]
            freshness: {warn_after: 1h}
        """,
    "models/m.yml": """\
        models:
          - name: clean
            materialized: stream
            sql: SELECT id, v FROM {{ source("events") }}
          - name: totals
            sql: SELECT sum(v) AS total FROM {{ ref("clean") }}
          - name: other.v2
            sql: SELECT id FROM {{ source("events") }}
        """,
    "tests/t.yml": """\
        tests:
          - name: clean-ids
            model: clean
            assertions: [{not_null: {columns: [id]}}]
          - name: events_unique
            source: events
            severity: warn
            assertions: [{unique: {columns: [id]}}]
        """,
    "exposures/e.yml": "exposures:\n  - {name: board, type: dashboard, owner: ops, depends_on: [{ref: totals}]}\n",
}


class Prefixed(StreamtTranslator):
    def get_model_key(self, model: Model) -> dg.AssetKey:
        return dg.AssetKey(["warehouse", "shop", model.name])

    def get_source_key(self, source: Source) -> dg.AssetKey:
        return dg.AssetKey(["raw", source.name])

    def get_check_name(self, test: DataTest) -> str:
        return "t_" + super().get_check_name(test)


DEFINITIONS = """\
from pathlib import Path

import dagster as dg

from dagster_streamt.dagster import StreamtTranslator, build_definitions


class Prefixed(StreamtTranslator):
    def get_model_key(self, model):
        return dg.AssetKey(["warehouse", "shop", model.name])


defs = build_definitions(Path(__file__).parent, translator=Prefixed("shop-v1"))
"""


def project(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    return write_project(tmp_path / "p", {**FILES, **(extra or {})})


def test_translator_keys_reach_every_definition(tmp_path: Path) -> None:
    root = project(tmp_path)
    defs = build_definitions(root, translator=Prefixed("shop-v1"))
    graph = defs.resolve_asset_graph()
    clean, totals = dg.AssetKey(["warehouse", "shop", "clean"]), dg.AssetKey(["warehouse", "shop", "totals"])
    assert sorted(k.to_user_string() for k in defs.resolve_all_asset_keys()) == [
        "exposures/board", "raw/events", "warehouse/shop/clean", "warehouse/shop/other.v2", "warehouse/shop/totals"]
    assert graph.get(clean).parent_keys == {dg.AssetKey(["raw", "events"])}
    assert graph.get(totals).parent_keys == {clean}
    assert graph.get(dg.AssetKey(["exposures", "board"])).parent_keys == {totals}
    lineage = defs.resolve_assets_def(totals).specs_by_key[totals].metadata["dagster/column_lineage"]
    assert {d.asset_key for deps in lineage.deps_by_column.values() for d in deps} == {clean}
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    assert checks == {("warehouse/shop/clean", "t_clean_ids"), ("raw/events", "t_events_unique"),
                      ("raw/events", "events_freshness")}
    job = defs.resolve_job_def("hourly_clean_job")
    assert set(job.asset_layer.executable_asset_keys) == {clean, totals}
    sensor = defs.resolve_sensor_def("events_new_data")
    assert set(sensor.asset_selection.resolve(graph)) == {  # the watched source (translated key) and its models
        dg.AssetKey(["raw", "events"]), clean, totals, dg.AssetKey(["warehouse", "shop", "other.v2"])}

    keys = KeyMap.from_definitions(defs, "shop-v1")
    assert keys is not None and keys == KeyMap.from_json(keys.to_json())
    assert keys.model("clean") == clean and keys.model_of(totals) == "totals" and keys.model_of(clean) == "clean"
    assert keys.node("source.events") == dg.AssetKey(["raw", "events"])
    assert keys.tests["clean-ids"] == dg.AssetCheckKey(clean, "t_clean_ids")
    assert keys.freshness == {"events": dg.AssetCheckKey(dg.AssetKey(["raw", "events"]), "events_freshness")}
    assert keys.assets == {"clean", "totals", "other.v2"}


def test_select_and_exclude_keep_part_of_the_project(tmp_path: Path) -> None:
    defs = build_definitions(project(tmp_path), select="clean+", exclude="totals")
    assert sorted(k.to_user_string() for k in defs.resolve_all_asset_keys()) == ["clean", "sources/events"]
    keys = KeyMap.from_definitions(defs, "shop-v1")
    assert keys is not None and keys.assets == {"clean"} and keys.missing(["totals", "clean"]) == ["totals"]
    assert keys.model("totals") == dg.AssetKey(["totals"])  # known, for the dependencies of the others
    assert set(keys.tests) == {"clean-ids", "events_unique"}
    assert defs.resolve_job_def("hourly_clean_job")  # the schedule keeps the models it still has
    with pytest.raises(ValueError, match="selection 'nope' matches nothing"):
        build_definitions(project(tmp_path), select="nope")


def test_colliding_keys_and_key_changes_are_errors(tmp_path: Path) -> None:
    class Flat(StreamtTranslator):
        def get_model_key(self, model: Model) -> dg.AssetKey:
            return dg.AssetKey(["all"])

    with pytest.raises(KeyMapError, match=r"model 'clean' and model 'other\.v2' both get the asset key 'all'"):
        build_definitions(project(tmp_path), translator=Flat("x"))

    class Rekey(StreamtTranslator):
        def get_asset_spec(self, entity: object, spec: dg.AssetSpec) -> dg.AssetSpec:
            return spec.replace_attributes(key=dg.AssetKey(["elsewhere", *spec.key.path]))

    with pytest.raises(KeyMapError, match="change keys in get_model_key"):
        build_definitions(project(tmp_path), translator=Rekey("x"))

    class Owned(StreamtTranslator):
        def get_asset_spec(self, entity: object, spec: dg.AssetSpec) -> dg.AssetSpec:
            return spec.merge_attributes(tags={"tier": "gold"})

    defs = build_definitions(project(tmp_path), translator=Owned("x"))
    assert all(s.tags.get("tier") == "gold" for s in defs.resolve_all_asset_specs())


def test_cli_finds_the_translator_of_definitions_py(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STREAMT_DEFINITIONS", raising=False)
    root = project(tmp_path, {"definitions.py": DEFINITIONS})
    location = code_location(load(root))
    assert location.origin == str(root / "definitions.py")
    assert location.keys.model("clean") == dg.AssetKey(["warehouse", "shop", "clean"])
    assert location.defs.resolve_assets_def(dg.AssetKey(["warehouse", "shop", "clean"]))  # the file's own defs

    monkeypatch.setenv("STREAMT_DEFINITIONS", "default")
    assert code_location(load(root)).keys.model("clean") == dg.AssetKey(["clean"])


def test_broken_or_foreign_definitions_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STREAMT_DEFINITIONS", raising=False)
    broken = project(tmp_path / "a", {"definitions.py": "import dagster as dg\n\nx = 1\nraise RuntimeError('boom')\n"})
    with pytest.raises(CodeLocationError, match=r"definitions.py failed: RuntimeError: boom \(line 4\)"):
        code_location(load(broken))
    foreign = project(tmp_path / "b", {"definitions.py": "import dagster as dg\n\n@dg.asset\ndef a() -> None: ...\n\n"
                                                         "defs = dg.Definitions(assets=[a])\n"})
    with pytest.raises(CodeLocationError, match="defines no asset of the streamt project 'shop-v1'"):
        code_location(load(foreign))
    none = project(tmp_path / "c", {"definitions.py": "VALUE = 1\n"})
    with pytest.raises(CodeLocationError, match="should define one dagster Definitions"):
        code_location(load(none))
    other_env = project(tmp_path / "d", {
        "definitions.py": DEFINITIONS.replace('translator=Prefixed("shop-v1")', 'env="prod"'),
        "environments/prod.yml": "runtime: {spark: {master: 'local[1]'}}\n"})
    with pytest.raises(CodeLocationError, match="with environment 'prod' but this command uses '\\(none\\)'"):
        code_location(load(other_env))
    monkeypatch.setenv("STREAMT_DEFINITIONS", str(tmp_path / "missing.py"))
    with pytest.raises(CodeLocationError, match="not a Python file nor a dg project folder"):
        code_location(load(other_env))


def test_lazy_definitions_function_and_env_passed_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STREAMT_DEFINITIONS", raising=False)
    monkeypatch.delenv("STREAMT_ENV", raising=False)
    lazy = DEFINITIONS.replace('defs = build_definitions(Path(__file__).parent, translator=Prefixed("shop-v1"))',
                               '@dg.definitions\ndef defs():\n'
                               '    return build_definitions(Path(__file__).parent, translator=Prefixed("x"))')
    root = project(tmp_path, {"definitions.py": lazy,
                              "environments/prod.yml": "runtime: {spark: {master: 'local[1]'}}\n"})
    location = code_location(load(root, "prod"))  # definitions.py reads STREAMT_ENV=prod, as `-e prod` asks
    assert location.keys.env == "prod" and location.keys.model("totals").path[0] == "warehouse"
    assert os.environ.get("STREAMT_ENV") is None  # restored
