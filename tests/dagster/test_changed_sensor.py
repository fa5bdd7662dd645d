"""The changed-models sensor (issue 41): a never-run model, then a run's recorded definition (reported to a
real Dagster instance as the models step reports it), then an edit: one request per change, with the full
refreshes `streamt plan` names as run config; a repeated tick asks nothing new. No JVM."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from dagster_streamt.api import load
from dagster_streamt.changes.facets import facets_of
from dagster_streamt.changes.record import definition_record
from dagster_streamt.core import metadata as meta
from dagster_streamt.dagster import build_definitions

from ..helpers import write_project

FILES = {
    "stream_project.yml": "project:\n  name: t\nruntime:\n  automations:\n    default_status: stopped\n",
    "sources/s.yml": "sources:\n  - name: s\n    format: json\n    path: d\n    columns: [{name: a}, {name: b}]\n",
    "models/m.yml": """\
models:
  - name: clean
    materialized: table
    sql: SELECT a, b FROM {{ source("s") }} WHERE a > 0
  - name: totals
    materialized: table
    sql: SELECT a, count(*) AS n FROM {{ ref("clean") }} GROUP BY a
  - name: side
    materialized: table
    sql: SELECT b FROM {{ source("s") }}
""",
}


def _tick(root: Path, instance: dg.DagsterInstance) -> tuple[list[dg.RunRequest], str | None]:
    defs = build_definitions(root)
    sensor = defs.resolve_sensor_def("t_changed_models")
    data = sensor.evaluate_tick(dg.build_sensor_context(instance=instance, definitions=defs))
    return list(data.run_requests or []), data.skip_message


def _ran(root: Path, instance: dg.DagsterInstance, names: list[str]) -> None:
    """What the models step reports for each model: a materialization with its definition."""
    loaded = load(root)
    facets = facets_of(loaded)
    for name in names:
        record = definition_record(facets, name)
        instance.report_runless_asset_event(dg.AssetMaterialization(
            asset_key=dg.AssetKey([name]), metadata={meta.DEFINITION: dg.MetadataValue.json(record)}))


def test_a_changed_definition_requests_one_run_with_its_full_refreshes(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", FILES)
    with dg.instance_for_test() as instance:
        assert build_definitions(root).resolve_sensor_def("t_changed_models").default_status == \
            dg.DefaultSensorStatus.STOPPED
        # never run: everything, fully
        requests, _ = _tick(root, instance)
        [first] = requests
        assert first.asset_selection == [dg.AssetKey(["clean"]), dg.AssetKey(["side"]), dg.AssetKey(["totals"])]
        assert first.run_config == {"resources": {"run_options": {"config": {"full_refresh": [
            "clean", "side", "totals"]}}}}
        _ran(root, instance, ["clean", "side", "totals"])
        requests, skip = _tick(root, instance)
        assert requests == [] and skip == "no model changed since its last run"

        # a changed filter: the model and what reads it, fully; the unrelated model not
        models = root / "models" / "m.yml"
        models.write_text(models.read_text().replace("WHERE a > 0", "WHERE a > 1"))
        requests, _ = _tick(root, instance)
        [changed] = requests
        assert changed.asset_selection == [dg.AssetKey(["clean"]), dg.AssetKey(["totals"])]
        assert changed.run_config["resources"]["run_options"]["config"]["full_refresh"] == ["clean", "totals"]
        assert changed.tags["streamt/changed"] == "clean, totals"
        again, _ = _tick(root, instance)
        assert [r.run_key for r in again] == [changed.run_key]  # the same change: Dagster drops the repeat

        # a description only: nothing to run
        _ran(root, instance, ["clean", "totals"])
        models.write_text(models.read_text().replace("  - name: side\n", "  - name: side\n    description: b only\n"))
        requests, skip = _tick(root, instance)
        assert requests == [] and skip == "no model changed since its last run"
