"""``streamt run``: materialize models through Dagster, in-process, on the project's instance, so
the run appears in the Dagster UI history."""

from __future__ import annotations

import sys

import click

from ..core.ids import names_of, node_id
from .common import EXIT_INVALID, load_or_exit, project_command, select_or_usage


@project_command("run")
@click.option("-s", "--select", "selection", default=None, help="Models to run (selection syntax); default all.")
@click.option("--full-refresh", "full_refresh", multiple=True, metavar="SEL",
              help="Reset these stream models' checkpoints and outputs first (selection syntax; repeatable).")
@click.option("--changed", is_flag=True, help="Only what `streamt plan` says needs a run (changed since its last run, "
              "new data, or an upstream change), with a full refresh where it says so.")
@click.option("--continuous", is_flag=True, help="Keep the selected stream models running (processing-time "
              "trigger) until Ctrl-C/SIGTERM, restarting failed queries with backoff.")
@click.option("--max-restarts", type=click.IntRange(min=0), default=None, metavar="N",
              help="With --continuous: give up on a model after N failed restarts in a row (default: never).")
def run(project_dir: str, env: str | None, selection: str | None, full_refresh: tuple[str, ...],
        changed: bool = False, continuous: bool = False, max_restarts: int | None = None) -> None:
    """Run the selected models on Spark as one Dagster run and print a summary."""
    loaded = load_or_exit(project_dir, env)
    graph = loaded.graph
    ids = select_or_usage(graph, selection) if selection else graph.of_type("model")
    refresh = sorted({i for sel in full_refresh for i in select_or_usage(graph, sel)})
    names = names_of(graph.topological_order(ids))
    if changed and continuous:
        raise click.UsageError("--changed runs what changed once; --continuous keeps streams running: use one")
    if changed:
        from .plan_cmd import plan_run

        names, rebuilt = plan_run(loaded, names)
        refresh = sorted({*refresh, *(node_id("model", n) for n in rebuilt)})
        if not names:
            click.echo("Nothing to run: every selected model is as its last run left it.")
            return
    if not names:
        click.echo("Nothing to run: the selection has no models.")
        return
    if max_restarts is not None and not continuous:
        raise click.UsageError("--max-restarts only applies with --continuous")
    if continuous:
        from .continuous_cmd import run_continuous

        run_continuous(loaded, env, names, names_of(refresh), max_restarts)
        return

    from .materialize import materialize

    if not materialize(loaded, env, names, names_of(refresh)):
        sys.exit(EXIT_INVALID)
