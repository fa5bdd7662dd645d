"""Loading: strict schema, located errors with hints, env vars, environments, recursion."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.api import load
from dagster_streamt.spec.errors import ProjectError, Severity
from dagster_streamt.spec.loader import load_project

from ..helpers import codes, write_project

SRC = """\
sources:
  - name: orders_raw
    format: json
    path: data/orders
    columns: [{name: order_id, type: bigint}]
"""


def test_example_project_is_valid() -> None:
    loaded = load(Path(__file__).parents[2] / "project", use_cache=False)
    assert loaded.errors == []
    assert sorted(loaded.project.models) == [
        "customer_orders", "daily_revenue", "high_value_orders", "order_metrics", "orders_clean", "orders_export"]
    assert loaded.project.models["orders_export"].materialized == "sink"


def test_entities_are_read_recursively_from_all_folders(tmp_path: Path) -> None:
    write_project(tmp_path, {
        "sources/deep/er/orders.yml": SRC,
        "models/a/b/c/m.yaml": "models:\n  - name: m\n    sql: SELECT order_id FROM {{ source('orders_raw') }}\n",
        "exposures/x/e.yml": "exposures:\n  - name: e\n    consumes: [{ref: m}]\n",
        "tests/t.yml": "tests:\n  - name: t1\n    model: m\n    assertions: [{not_null: {columns: [order_id]}}]\n",
    })
    project, diags = load_project(tmp_path)
    assert not diags.has_errors, diags.items
    assert list(project.sources) == ["orders_raw"]
    assert list(project.models) == ["m"]
    assert list(project.exposures) == ["e"]
    assert list(project.tests) == ["t1"]
    assert project.where("model", "m") == ("models/a/b/c/m.yaml", 2)


def test_unknown_keys_are_errors_with_did_you_mean_and_line(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": """\
        project:
          name: t
        models:
          - name: m
            descripton: typo here
            materialised: table
            sql: SELECT 1 AS x FROM {{ source("s") }}
        sources:
          - name: s
            format: json
            path: d
        """})
    _, diags = load_project(tmp_path)
    unknown = [d for d in diags.items if d.code == "STR010"]
    assert [(d.line, d.message) for d in unknown] == [
        (5, "model 'm': unknown key 'descripton'"), (6, "model 'm': unknown key 'materialised'")]
    assert unknown[0].hint == 'did you mean "description"?'
    assert unknown[1].hint == 'did you mean "materialized"?'
    assert all(d.file == "stream_project.yml" for d in unknown)


def test_unknown_top_level_and_nested_keys(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": """\
        project: {name: t}
        modles: []
        runtime:
          spark:
            mastr: local[1]
        """})
    _, diags = load_project(tmp_path)
    found = {(d.code, d.line, d.hint) for d in diags.items}
    assert ("STR010", 2, 'did you mean "models"?') in found
    assert ("STR010", 5, 'did you mean "master"?') in found


def test_every_error_is_collected_not_just_the_first(tmp_path: Path) -> None:
    write_project(tmp_path, {
        "models/a.yml": "models:\n  - name: a\n    materialized: tabel\n    sql: SELECT 1\n",
        "models/b.yml": "models:\n  - name: bad name!\n    sql: SELECT 1\n",
        "models/c.yml": "models:\n  - name: c\n    sql: [not, a, string]\n",
        "sources/bad.yml": "sources:\n  - name: s\n    format: json\n",
        "tests/t.yml": "tests:\n  - name: t\n    assertions: []\n",
    })
    _, diags = load_project(tmp_path)
    got = sorted((d.file, d.code) for d in diags.errors)
    assert "letters, digits" in next(d.hint for d in diags.errors if d.file == "models/b.yml")
    assert ("models/a.yml", "STR040") in got
    assert ("models/b.yml", "STR012") in got
    assert ("models/c.yml", "STR012") in got
    assert ("sources/bad.yml", "STR012") in got
    assert ("tests/t.yml", "STR012") in got
    bad_mat = next(d for d in diags.errors if d.code == "STR040")
    assert bad_mat.line == 3 and 'did you mean "table"?' in bad_mat.hint


def test_duplicate_names_and_duplicate_yaml_keys(tmp_path: Path) -> None:
    write_project(tmp_path, {
        "models/a.yml": "models:\n  - name: m\n    sql: SELECT 1\n",
        "models/b.yml": "models:\n  - name: m\n    sql: SELECT 2\n    sql: SELECT 3\n",
    })
    _, diags = load_project(tmp_path)
    dup = next(d for d in diags.errors if d.code == "STR020")
    assert dup.file == "models/b.yml" and "first at models/a.yml:2" in dup.message
    key = next(d for d in diags.errors if d.code == "STR013")
    assert (key.file, key.line) == ("models/b.yml", 4)


def test_yaml_syntax_error_is_located(tmp_path: Path) -> None:
    write_project(tmp_path, {"models/a.yml": "models:\n  - name: m\n    sql: [unclosed\n"})
    _, diags = load_project(tmp_path)
    err = next(d for d in diags.errors if d.code == "STR001")
    assert err.file == "models/a.yml" and err.line >= 3


def test_missing_root_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as exc:
        load(tmp_path / "nope", use_cache=False)
    assert codes(exc.value.diagnostics) == ["STR003"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProjectError) as exc:
        load(tmp_path / "empty", use_cache=False)
    assert "stream_project.yml" in exc.value.diagnostics[0].message


def test_env_vars_everywhere_and_every_missing_name_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATA_DIR", "landing")
    monkeypatch.delenv("MISSING_ONE", raising=False)
    monkeypatch.delenv("MISSING_TWO", raising=False)
    write_project(tmp_path, {
        "sources/s.yml": """\
            sources:
              - name: s
                format: json
                path: ${DATA_DIR}/orders
                description: '{{ env_var("DESC", "fallback text") }}'
                owner: ${MISSING_ONE}
                tags: ['{{ env_var("MISSING_TWO") }}', "${WITH_DEFAULT:-dflt}"]
            """,
    })
    project, diags = load_project(tmp_path)
    missing = [d for d in diags.errors if d.code == "STR030"]
    assert sorted(d.message for d in missing) == [
        "environment variable MISSING_ONE is not set", "environment variable MISSING_TWO is not set"]
    assert all("missing: MISSING_ONE, MISSING_TWO" in d.hint for d in missing)
    assert [d.line for d in sorted(missing)] == [6, 7]
    s = project.sources["s"]
    assert s.path == "landing/orders"
    assert s.description == "fallback text"
    assert s.tags[1] == "dflt"


def test_dotenv_and_environment_overlay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STREAMT_ENV", raising=False)
    monkeypatch.delenv("WAREHOUSE", raising=False)
    write_project(tmp_path, {
        "stream_project.yml": "project: {name: t}\nruntime:\n  spark:\n    master: local[1]\n"
                              "    warehouse: ${WAREHOUSE}\n",
        "environments/prod.yml": "runtime:\n  spark:\n    remote: sc://spark.example:15002\n",
        "environments/bad.yml": "runtime:\n  spark:\n    remoet: x\n",
    })
    (tmp_path / ".env").write_text("# comment\nexport WAREHOUSE='/tmp/wh'\n")
    project, diags = load_project(tmp_path)
    assert not diags.has_errors
    assert project.runtime.spark.warehouse == "/tmp/wh"
    assert project.runtime.spark.remote is None
    project, diags = load_project(tmp_path, env="prod")
    assert project.runtime.spark.remote == "sc://spark.example:15002"
    assert project.runtime.spark.master == "local[1]"  # deep-merged, not replaced
    monkeypatch.setenv("STREAMT_ENV", "prod")
    project, _ = load_project(tmp_path)
    assert project.env == "prod"
    _, diags = load_project(tmp_path, env="bad")
    bad = next(d for d in diags.errors if d.code == "STR010")
    assert bad.file == "environments/bad.yml" and bad.line == 3
    _, diags = load_project(tmp_path, env="staging")
    err = next(d for d in diags.errors if d.code == "STR004")
    assert "bad, prod" in err.hint


def test_legacy_materializations_are_mapped_with_a_note(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: a
            materialized: topic
            sql: SELECT order_id FROM {{ source("orders_raw") }}
          - name: b
            materialized: flink
            sql: SELECT order_id FROM {{ ref("a") }}
          - name: c
            materialized: virtual_topic
            sql: SELECT order_id FROM {{ ref("a") }}
        """})
    project, diags = load_project(tmp_path)
    assert [project.models[n].materialized for n in "abc"] == ["stream", "stream", "view"]
    notes = [d for d in diags.items if d.code == "STR041"]
    assert len(notes) == 3 and all(d.severity is Severity.NOTE for d in notes)
    assert not diags.has_errors


def test_defaults_apply_and_sink_is_inferred_from_from(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": """\
        project: {name: t}
        defaults:
          models: {materialized: view, owner: data-eng, tags: [shop]}
        """, "sources/s.yml": SRC, "models/m.yml": """\
        models:
          - name: a
            sql: SELECT order_id FROM {{ source("orders_raw") }}
            tags: [x]
          - name: out
            from: a
            sink: {format: csv, path: out}
        """})
    project, _ = load_project(tmp_path)
    a = project.models["a"]
    assert (a.materialized, a.owner, a.tags) == ("view", "data-eng", ["shop", "x"])
    assert project.models["out"].materialized == "sink"  # the YAML alone says so: no SQL needed
    assert project.inferred["out"] == "`from:` without `sql:`"


def test_source_location_checks(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": """\
        sources:
          - name: a
            format: jdbc
          - name: b
            format: parqet
            path: x
          - name: k
            topic: orders.v1
        """})
    project, diags = load_project(tmp_path)
    msgs = sorted(d.message for d in diags.errors)
    assert any("a jdbc source needs" in m for m in msgs)
    assert any("unknown format 'parqet'" in m for m in msgs)
    assert project.sources["k"].resolved_format == "kafka"


def test_a_retired_setting_is_still_accepted(tmp_path: Path) -> None:
    """``parsed_cache_mb`` no longer has an effect (the parsed-source cache is gone); projects that set it
    still load, without an error or warning."""
    write_project(tmp_path, {"stream_project.yml": "project: {name: t}\nruntime:\n  spark:\n    parsed_cache_mb: 0\n"})
    project, diags = load_project(tmp_path)
    assert project is not None and diags.items == []
    assert project.runtime.spark.parsed_cache_mb == 0
