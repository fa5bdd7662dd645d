"""Run a list of models as one Dagster run: the service behind ``streamt run`` and the upstream
tables ``streamt run --continuous`` starts first, so no command has to invoke another."""

from __future__ import annotations

import click

from ..api import LoadedProject
from ..core import metadata as meta
from ..location_files import default_location


def materialize(loaded: LoadedProject, env: str | None, names: list[str], refresh: list[str]) -> bool:
    """Run ``names`` (topologically ordered) through Dagster, resetting the streams in ``refresh``
    first; prints progress, the summary and any failure. True when every model and blocking test
    passed. Partitioned models are left out with a hint: they run per partition (``streamt backfill``)."""
    partitioned = [n for n in names if loaded.project.models[n].partitioned_by is not None]
    if partitioned:
        click.echo(f"note: partitioned model(s) {', '.join(partitioned)} run per partition: "
                   f"`streamt backfill {partitioned[0]} --from ... --to ...`")
        names = [n for n in names if n not in partitioned]
        if not names:
            return True

    todo = _needing_spark(loaded, names, refresh)
    if default_location(loaded.project.root) and todo:
        from ..spark.new_data import choose_jit
        from ..spark.session.prestart import prestart  # the session is known before Dagster is imported

        prestart(loaded.project, choose_jit(loaded.project, loaded.compiled, todo, refresh))
    from .dagster_exec import execute, report_failures

    outcome = execute(loaded, env, names, {meta.COMMAND_TAG: "run"},
                      f"Running {len(names)} model(s) on Spark through Dagster",
                      full_refresh=[r for r in refresh if r in names])
    if not outcome.success:
        report_failures(outcome)
    return outcome.success


def _needing_spark(loaded: LoadedProject, names: list[str], refresh: list[str]) -> list[str]:
    """The models of the run that have something new (a run where none has starts no JVM). No
    Dagster import here: the JVM's start overlaps it."""
    from ..checks.assertions import relations_read
    from ..checks.results import model_tests
    from ..spark.up_to_date import Definitions, unchanged_models

    defs = Definitions(loaded.compiled, model_tests(loaded.project.tests), relations_read)  # the default resource's
    unchanged = unchanged_models(loaded.project, defs, names, refresh)
    return [n for n in names if n not in unchanged]
