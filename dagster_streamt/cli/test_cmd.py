"""``streamt test``: run the project's data tests against the tables as they are now."""

from __future__ import annotations

import json
import sys
import time

import click

from .common import EXIT_INVALID, guarded, load_or_exit, project_options


@click.command("test")
@project_options
@click.option("-s", "--select", "selection", default=None,
              help="Tests of these models/sources (selection syntax), or test names; default all.")
@click.option("--type", "test_type", type=click.Choice(["schema", "sample", "continuous", "freshness"]),
              default=None, help="Only tests of this type (freshness: the sources' `freshness:` checks).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@guarded
def test(project_dir: str, env: str | None, selection: str | None, test_type: str | None, fmt: str) -> None:
    """Run data tests on Spark, and source freshness; exit 1 when a check with severity error fails."""
    from ..checks.results import target_of
    from ..checks.source_freshness import checked_sources, run_freshness
    from ..graph.select import SelectionError, select

    loaded = load_or_exit(project_dir, env)
    tests = [t for _, t in sorted(loaded.project.tests.items()) if t.enabled]
    fresh = list(checked_sources(loaded.project))
    if selection:
        try:
            ids = set(select(loaded.graph, selection, types=("model", "source", "test")))
        except SelectionError as exc:
            raise click.UsageError(str(exc)) from None
        tests = [t for t in tests if f"test.{t.name}" in ids or "{}.{}".format(*target_of(t)) in ids]
        fresh = [s for s in fresh if f"source.{s}" in ids]
    if test_type:
        tests = [t for t in tests if t.type == test_type]
        fresh = fresh if test_type == "freshness" else []
    if not tests and not fresh:
        click.echo("No tests selected.")
        return

    from ..checks.execute import execute_test
    from ..spark import create_session, stop_session

    run_id = f"cli-{int(time.time())}"
    sessions: list = []

    def session() -> object:  # file-source freshness needs no JVM: start Spark only when asked
        if not sessions:
            sessions.append(create_session(loaded.project))
        return sessions[0]

    results = []
    try:
        for t in tests:
            results.append(execute_test(session(), loaded.project, t, run_id=run_id))
        results += run_freshness(loaded.project, fresh, session)
    finally:
        for s in sessions:
            stop_session(s)
    if fmt == "json":
        click.echo(json.dumps([r.to_dict() for r in results], indent=2, sort_keys=True, default=str))
    else:
        _table(results)
    if any(not r.passed and r.severity == "error" for r in results):
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
