"""``streamt vacuum``: delete the data files of old Delta versions (Delta's VACUUM) for the selected
models, keeping ``runtime.spark.delta.vacuum_retention_hours`` of history. Runs never vacuum by themselves:
a VACUUM lists every file of the table, a job per table that a refresh should not pay for."""

from __future__ import annotations

import json

import click

from ..core.ids import names_of
from .common import fail, load_or_exit, project_command, select_or_usage
from .delta_models import jvm_console_on_stderr, kind_of, stores_delta


@project_command("vacuum")
@click.option("-s", "--select", "selection", default=None, help="Models to vacuum (selection syntax); default all "
              "with a Delta table.")
@click.option("--retention-hours", type=click.FloatRange(min=0), default=None, metavar="H",
              help="Keep this much history instead of runtime.spark.delta.vacuum_retention_hours (default 168).")
@click.option("--dry-run", is_flag=True, help="Only count the files a VACUUM would delete.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def vacuum(project_dir: str, env: str | None, selection: str | None, retention_hours: float | None, dry_run: bool,
           fmt: str) -> None:
    """Delete data files no Delta version younger than the retention needs; older versions can then no
    longer be read or restored."""
    from ..spark.delta.delta_maintenance import DELTA_MIN_RETENTION_HOURS
    from ..spark.delta.delta_maintenance import vacuum as vacuum_table

    loaded = load_or_exit(project_dir, env)
    ids = select_or_usage(loaded.graph, selection) if selection else loaded.graph.of_type("model")
    from ..spark.storage.paths import ProjectPaths
    from ..spark.storage.warehouse import Warehouse

    models = loaded.project.models
    warehouse = Warehouse.for_project(loaded.project)
    names = sorted(names_of(ids, "model"))
    tables = [n for n in names if stores_delta(models[n]) and (warehouse.data_dir(n) / "_delta_log").is_dir()]
    if not tables:
        click.echo("Nothing to vacuum: no selected model has a Delta table yet.")
        return
    configured = loaded.project.runtime.spark.delta.vacuum_retention_hours
    hours = retention_hours if retention_hours is not None else configured
    if hours < DELTA_MIN_RETENTION_HOURS:
        click.echo(click.style(
            f"warning: retention {hours:g} h is below Delta's safety floor of {DELTA_MIN_RETENTION_HOURS:g} h: "
            "this vacuum turns off spark.databricks.delta.retentionDurationCheck for itself, so a reader or "
            f"writer elsewhere that started more than {hours:g} h ago may lose files it still needs", fg="yellow"),
            err=True)
    from ..spark.errors import StreamtSparkError
    from ..spark.session.session import create_session

    try:
        with jvm_console_on_stderr():
            spark = create_session(loaded.project)
            paths = ProjectPaths.from_project(loaded.project)
            done = [vacuum_table(spark, warehouse, paths, n, hours, dry_run, stream=kind_of(models[n]) == "stream")
                    for n in tables]
    except StreamtSparkError as exc:
        fail(str(exc))
    if fmt == "json":
        click.echo(json.dumps({"retention_hours": hours, "dry_run": dry_run,
                               "models": [d.__dict__ for d in done]}, indent=2, sort_keys=True))
        return
    verb = "would delete" if dry_run else "deleted"
    for d in done:
        click.echo(f"{d.model:<28} {verb} {d.files:,} file(s), {d.bytes:,} bytes")
    click.echo(f"retention: {hours:g} h (runtime.spark.delta.vacuum_retention_hours or --retention-hours)")
