"""Warm cache correctness, and the loader never raising on malformed input (hypothesis)."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagster_streamt.api import load
from dagster_streamt.spec.errors import ProjectError

from ..helpers import write_project

SRC = "sources:\n  - name: s\n    format: json\n    path: d\n"


def test_warm_cache_hits_and_invalidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COND", "1 = 1")
    write_project(tmp_path, {"sources/s.yml": SRC,
                             "models/m.yml": "models:\n  - name: m\n    sql: SELECT a FROM {{ source('s') }} "
                                             "WHERE {{ env_var('COND') }}\n"})
    first = load(tmp_path)
    assert not first.from_cache
    second = load(tmp_path)
    assert second.from_cache and second.compiled.models["m"].sql == first.compiled.models["m"].sql
    monkeypatch.setenv("COND", "2 = 2")  # a variable the project read changed: recompile
    third = load(tmp_path)
    assert not third.from_cache and third.compiled.models["m"].sql.endswith("WHERE 2 = 2")
    (tmp_path / "models" / "m.yml").write_text("models:\n  - name: m\n    sql: SELECT b FROM {{ source('s') }}\n")
    fourth = load(tmp_path)
    assert not fourth.from_cache and fourth.compiled.models["m"].output_columns == ("b",)
    (tmp_path / "models" / "extra.yml").write_text("models:\n  - name: n\n    sql: SELECT b FROM {{ ref('m') }}\n")
    assert "n" in load(tmp_path).project.models


_yaml_chars = st.sampled_from(list(string.ascii_letters + string.digits + " :-_{}[]\"'|>#&*!%@`,.\n\t$()=<"))
_keys = st.sampled_from(["name", "sql", "materialized", "from", "sources", "models", "tests", "exposures",
                         "columns", "format", "path", "assertions", "consumes", "ref", "source", "project",
                         "runtime", "spark", "rules", "cron", "schedules", "event_time", "sink", "vars"])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**20), st.floats(allow_nan=True),
                     st.text(_yaml_chars, max_size=30), st.sampled_from(["{{ ref('a') }}", "SELECT 1", "${X}",
                                                                          "{{ source('s') }}", "{% for %}"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_keys, inner, max_size=5)), max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(root=st.text(_yaml_chars, max_size=200), models=st.dictionaries(_keys, _values, max_size=4))
def test_loader_never_raises_on_garbage(tmp_path: Path, root: str, models: dict) -> None:
    import yaml

    write_project(tmp_path, {"stream_project.yml": root, "models/m.yml": yaml.safe_dump(models)})
    try:
        loaded = load(tmp_path, use_cache=False)
    except ProjectError as exc:
        assert exc.diagnostics  # a structured error, never a crash
        return
    for d in loaded.diagnostics:
        assert d.code and d.message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entity=st.dictionaries(_keys, _values, max_size=8), section=st.sampled_from(
    ["sources", "models", "tests", "exposures", "schedules"]))
def test_loader_never_raises_on_structured_garbage(tmp_path: Path, entity: dict, section: str) -> None:
    import yaml

    write_project(tmp_path, {f"{section if section != 'schedules' else 'models'}/x.yml":
                             yaml.safe_dump({section: [entity, {"name": "ok"}]})})
    loaded = load(tmp_path, use_cache=False)
    assert all(d.file and d.code for d in loaded.diagnostics if d.code != "REF006")


def test_graph_cache_for_lineage(tmp_path: Path) -> None:
    from dagster_streamt.api import GRAPH_CACHE_FILE, load_graph

    write_project(tmp_path, {"sources/s.yml": SRC,
                             "models/m.yml": "models:\n  - name: m\n    sql: SELECT a FROM {{ source('s') }}\n"})
    assert set(load_graph(tmp_path).nodes) == {"source.s", "model.m"}
    assert (tmp_path / GRAPH_CACHE_FILE).is_file()
    (tmp_path / "models" / "n.yml").write_text("models:\n  - name: n\n    sql: SELECT a FROM {{ ref('m') }}\n")
    assert load_graph(tmp_path).downstream("source.s") == {"model.m", "model.n"}
    (tmp_path / "models" / "n.yml").write_text("models:\n  - name: n\n    sql: SELECT a FROM {{ ref('nope') }}\n")
    with pytest.raises(ProjectError):
        load_graph(tmp_path)
    assert not (tmp_path / GRAPH_CACHE_FILE).exists()  # an invalid project never answers from a stale graph
