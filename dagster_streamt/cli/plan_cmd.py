"""``streamt plan``: each model now against what its last successful run ran (the definition that run
recorded in the Dagster instance), what a run would refresh, fully or incrementally, and in what order.

Exit codes as ``streamt diff``: 0, 1 (a project that does not load), 2 usage, 3 with ``--fail-on CLASS``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from ..core.ids import name_of
from .common import load_or_exit, project_command, select_or_usage
from .diff_cmd import EXIT_GATE, FAIL_ON, gate

if TYPE_CHECKING:
    from ..changes.classify import ChangeSet
    from ..core.loaded import LoadedProject


def _plan(loaded: LoadedProject, names: list[str]) -> ChangeSet:
    from ..dagster.change_plan import plan_changes
    from .dagster_exec import instance_or_exit, location_or_exit

    keys = location_or_exit(loaded).keys
    with instance_or_exit(loaded) as instance:
        return plan_changes(loaded, names, instance, keys)


def plan_run(loaded: LoadedProject, names: list[str]) -> tuple[list[str], list[str]]:
    """What ``streamt run --changed`` runs of ``names``: the models the plan refreshes, in run order, and
    those it refreshes fully."""
    changes = _plan(loaded, names)
    full = {c.name for c in changes.changes if c.kind == "model" and c.refresh == "full"}
    click.echo(f"Changed since the last run: {', '.join(changes.order) or 'nothing'}"
               + (f" (full refresh: {', '.join(n for n in changes.order if n in full)})" if full else ""))
    return list(changes.order), sorted(full)


@project_command("plan")
@click.option("-s", "--select", "selection", default=None, help="Only these models (selection syntax).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(FAIL_ON), default=None,
              help=f"Exit {EXIT_GATE} when a change of this class or a worse one is present.")
def plan(project_dir: str, env: str | None, selection: str | None, fmt: str, fail_on: str | None) -> None:
    """Each model against its last successful run: its class (new, unchanged, metadata, non_breaking,
    breaking, state_incompatible), why, what it reaches downstream, whether a run refreshes it fully,
    incrementally (new data) or not at all, and the order it would run in. No Spark."""
    from ..changes.render import text

    loaded = load_or_exit(project_dir, env)
    if selection:
        names = sorted(name_of(n) for n in select_or_usage(loaded.graph, selection))
    else:
        names = sorted(n for n, m in loaded.project.models.items() if m.enabled)
    changes = _plan(loaded, names)
    if fmt == "json":
        click.echo(json.dumps(changes.to_dict(), indent=2, sort_keys=True))
    else:
        click.echo(text(changes, f"streamt plan: {loaded.project.ident} against each model's last run"))
    gate(changes, fail_on)
