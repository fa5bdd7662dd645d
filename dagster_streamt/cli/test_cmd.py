"""``streamt test``: run the project's data tests against the tables as they are now.

The tests run as one Dagster run of their asset checks, in-process on the project's instance (like
``streamt run``), so each result is an asset check evaluation: ``streamt status`` and the UI show
the latest one whichever way the check ran."""

from __future__ import annotations

import json
import sys

import click

from ..core import metadata as meta
from .common import EXIT_INVALID, load_or_exit, project_command, select_or_usage


@project_command("test")
@click.option("-s", "--select", "selection", default=None,
              help="Tests of these models/sources (selection syntax), or test names; default all.")
@click.option("--type", "test_type", type=click.Choice(["schema", "sample", "continuous", "freshness"]),
              default=None, help="Only tests of this type (freshness: the sources' `freshness:` checks).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def test(project_dir: str, env: str | None, selection: str | None, test_type: str | None, fmt: str) -> None:
    """Run data tests on Spark, and source freshness; exit 1 when a check with severity error fails."""
    from ..checks.results import target_of
    from ..checks.source_freshness import checked_sources

    loaded = load_or_exit(project_dir, env)
    tests = [t for _, t in sorted(loaded.project.tests.items()) if t.enabled]
    fresh = list(checked_sources(loaded.project))
    if selection:
        ids = set(select_or_usage(loaded.graph, selection, ("model", "source", "test")))
        tests = [t for t in tests if f"test.{t.name}" in ids or "{}.{}".format(*target_of(t)) in ids]
        fresh = [s for s in fresh if f"source.{s}" in ids]
    if test_type:
        tests = [t for t in tests if t.type == test_type]
        fresh = fresh if test_type == "freshness" else []
    if not tests and not fresh:
        click.echo("No tests selected.")
        return

    from .dagster_exec import execute, location_or_exit

    keys = location_or_exit(loaded).keys
    left_out = [t.name for t in tests if t.name not in keys.tests] + [s for s in fresh if s not in keys.freshness]
    if left_out:
        click.echo(f"note: not checks of the code location (its select/exclude leaves their targets out): "
                   f"{', '.join(left_out)}", err=True)
    wanted = [keys.tests[t.name] for t in tests if t.name in keys.tests] + \
        [keys.freshness[s] for s in fresh if s in keys.freshness]
    if not wanted:
        return
    quiet = fmt == "json"  # the JSON on stdout stays parseable
    outcome = execute(loaded, env, [], {meta.COMMAND_TAG: "test"},
                      f"Running {len(wanted)} check(s) through Dagster", checks=wanted, quiet=quiet)
    order = [t.name for t in tests] + [f"{s}_freshness" for s in fresh]
    by_name = {e.result.test: e.result for e in outcome.checks if e.result is not None}
    results = [by_name[n] for n in order if n in by_name]
    if fmt == "json":
        click.echo(json.dumps([r.to_dict() for r in results], indent=2, sort_keys=True, default=str))
    else:
        _table(results)
    for reason in outcome.run_errors:  # the run itself failed (Spark could not start, ...)
        click.echo(click.style(f"error: {reason}", fg="red"), err=True)
    if outcome.run_errors or any(not r.passed and r.severity == "error" for r in results):
        sys.exit(EXIT_INVALID)


def _table(results: list) -> None:
    click.echo(f"{'test':<32} {'target':<28} {'status':<10} {'failing rows':>12} {'seconds':>8}")
    for r in results:
        status = "pass" if r.passed else ("FAIL" if r.severity == "error" else "warn")
        color = "green" if r.passed else ("red" if r.severity == "error" else "yellow")
        failing = sum(a.failing_rows for a in r.assertions)
        click.echo(f"{r.test:<32} {r.target:<28} {click.style(f'{status:<10}', fg=color)} {failing:>12,} "
                   f"{r.duration_seconds:>8.1f}")
        if r.error:
            click.echo(f"    error: {r.error}")
        for a in r.failed:
            click.echo(f"    {a.label}: {a.error or a.message or a.description}")
    bad = [r for r in results if not r.passed]
    click.echo(f"\ntests: {len(results) - len(bad)} passed, {len(bad)} failed")
