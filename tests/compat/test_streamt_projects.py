"""streamt's own projects load as written: the repository's example and fixtures, and the projects its
documentation builds file by file (tests/compat/streamt_projects, Apache-2.0, see NOTICE.md).

Each one validates with no error but its genuine governance findings (the same rules streamt itself
enforces), its graph is the one streamt's manifest gives, and its Dagster definitions load.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions
from dagster_streamt.graph.graph import split_id
from dagster_streamt.spec.names import safe_identifier

PROJECTS = Path(__file__).parent / "streamt_projects"
# the values the docs' projects read from the environment (their `.env`, as streamt's docs show)
ENV = {name: "x" for name in (
    "KAFKA_USER", "KAFKA_PASSWORD", "SNOWFLAKE_URL", "SNOWFLAKE_USER", "SNOWFLAKE_KEY", "SNOWFLAKE_PRIVATE_KEY",
    "S3_BUCKET", "AWS_REGION", "AWS_ACCESS_KEY", "AWS_SECRET_KEY")} | {
    "KAFKA_BROKERS": "broker:9092", "SCHEMA_REGISTRY_URL": "http://registry:8081"}

# Governance findings each project has under its own rules (streamt reports the same ones).
FINDINGS: dict[str, set[str]] = {
    "complete_project": set(),
    "docs_ecommerce": set(),
    "docs_first_pipeline": set(),
    "docs_iot": {"GOV401"},  # facility_metrics: 6 partitions under `min_partitions: 12`
    "docs_payments": {"GOV103", "GOV301"},  # 3 untested models, unclassified source columns
    "docs_quickstart": set(),
    "minimal_project": set(),
    "payments_example": set(),
}


@pytest.fixture(params=sorted(FINDINGS))
def project(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / request.param
    shutil.copytree(PROJECTS / request.param, root)
    return root


def test_validates_with_only_governance_findings(project: Path) -> None:
    loaded = load(project, use_cache=False)
    assert not loaded.errors, "\n".join(d.format() for d in loaded.errors)
    assert {d.code for d in loaded.findings} == FINDINGS[project.name]
    assert not [d for d in loaded.diagnostics if d.code == "STR010"]  # no key is unknown


def test_dagster_definitions_show_the_full_graph(project: Path) -> None:
    loaded = load(project, use_cache=False)
    defs = build_definitions(project)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {f"sources/{n}" for n in loaded.project.sources} <= keys
    assert set(loaded.project.models) <= keys
    assert {f"exposures/{n}" for n in loaded.project.exposures} <= keys
    checks = {k.name for k in graph.asset_check_keys}
    assert {safe_identifier(t) for t, test in loaded.project.tests.items() if test.enabled} <= checks
    for name, model in loaded.project.models.items():  # every model's inputs are its Dagster deps
        deps = {d.to_user_string() for d in graph.get(dg.AssetKey([name])).parent_keys}
        want = {f"sources/{split_id(u)[1]}" if u.startswith("source.") else split_id(u)[1]
                for u in loaded.graph.upstream_of(f"model.{name}")}
        assert deps == want, name
        assert model.materialized in ("table", "view", "stream", "sink")


def test_payments_example_graph_equals_streamts_manifest(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(PROJECTS / "payments_example", root)
    manifest = json.loads((root / "manifest.json").read_text())
    loaded = load(root, use_cache=False)
    ours = {(split_id(a)[1], split_id(b)[1]) for a in loaded.graph.nodes for b in loaded.graph.downstream_of(a)
            if not b.startswith("test.")}
    theirs = {(e["from"], e["to"]) for e in manifest["dag"]["edges"]}
    assert ours == theirs
    kinds = {n["name"]: n["type"] for n in manifest["dag"]["nodes"]}
    assert {split_id(i)[1]: split_id(i)[0] for i in loaded.graph.nodes if not i.startswith("test.")} == kinds


def test_materializations_are_inferred_as_streamt_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / "iot"
    shutil.copytree(PROJECTS / "docs_iot", root)
    p = load(root, use_cache=False).project
    got = {n: (m.materialized, p.inferred.get(n)) for n, m in p.models.items()}
    assert got == {
        "readings_clean": ("stream", "stateless SELECT/WHERE"),
        "sensor_status": ("stream", "windowed aggregation (TUMBLE); with state"),
        "anomaly_detection": ("stream", "temporal join; with state"),
        "facility_metrics": ("stream", "windowed aggregation (TUMBLE); with state"),
        "readings_archive": ("sink", "`from:` without `sql:`"),
    }


def test_each_kind_of_no_effect_key_gets_one_note(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(PROJECTS / "payments_example", root)
    notes = [d for d in load(root, use_cache=False).diagnostics if d.code == "STR042"]
    assert sorted(d.message.split("`")[1] for d in notes) == [  # models[].topic: creates the topics
        "runtime.connect", "runtime.flink", "runtime.schema_registry"]
    flink = next(d for d in notes if "runtime.flink" in d.message)
    assert (flink.file, flink.line) == ("stream_project.yml", 11)
    assert all(d.severity.value == "note" for d in notes)
    shutil.copytree(PROJECTS / "guide_windowed", tmp_path / "w")
    notes = [d for d in load(tmp_path / "w", use_cache=False).diagnostics if d.code == "STR042"]
    flink = next(d for d in notes if "models[].advanced.flink" in d.message)
    assert (flink.file, flink.line) == ("models/hourly_order_stats.yml", 27) and "(and 1 more place)" in flink.message


def test_producer_exposures_are_upstream_of_their_sources(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(PROJECTS / "complete_project", root)
    loaded = load(root, use_cache=False)
    assert tuple(loaded.graph.upstream_of("source.card_payments_raw")) == ("exposure.payments_api",)
    graph = build_definitions(root).resolve_asset_graph()
    source = graph.get(dg.AssetKey(["sources", "card_payments_raw"]))
    assert source.parent_keys == {dg.AssetKey(["exposures", "payments_api"])}
    producer = graph.get(dg.AssetKey(["exposures", "payments_api"]))
    assert producer.metadata["role"] == "producer" and not producer.parent_keys


def test_dagster_loads_a_streamt_project_as_a_code_location(tmp_path: Path) -> None:
    """What `dagster dev` does first: load the code location from a definitions.py next to the project."""
    import os
    import subprocess
    import sys

    root = tmp_path / "payments"
    shutil.copytree(PROJECTS / "docs_payments", root)
    (root / "definitions.py").write_text("from pathlib import Path\nfrom dagster_streamt.dagster import "
                                         "build_definitions\ndefs = build_definitions(Path(__file__).parent)\n")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, **ENV, "DAGSTER_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "dagster", "definitions", "validate", "-f", "definitions.py"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation successful" in done.stdout + done.stderr
