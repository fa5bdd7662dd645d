"""Execute models and checks through Dagster in-process on the project's instance (so runs appear
in the UI history), printing progress and a summary, and emit the run's OpenLineage events. Shared
by ``streamt run``, ``backfill`` and ``test``.

The definitions and asset keys are the project's code location's (see
:mod:`dagster_streamt.dagster.code_location`): a translator or component there decides the keys
these runs write, as it does for the UI."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import click

from ..api import LoadedProject
from .common import fail
from .live_line import LiveLine, live_line


@dataclass
class Outcome:
    run_id: str
    success: bool
    failures: list[str]
    checks: list[Any] = field(default_factory=list)  # CheckEvents, in the order the checks ran
    run_errors: list[str] = field(default_factory=list)  # why the Dagster run itself failed


def location_or_exit(loaded: LoadedProject) -> Any:
    """The project's code location; a broken one is a one-line error naming the file, not a traceback."""
    from ..dagster.code_location import CodeLocationError, code_location

    try:
        return code_location(loaded)
    except CodeLocationError as exc:
        fail(str(exc))


def instance_or_exit(loaded: LoadedProject) -> Any:
    """The project's Dagster instance; a dagster.yaml that cannot be used is a one-line error with the fix."""
    from ..dagster.instance import InstanceError, project_instance

    try:
        return project_instance(loaded.project.root)
    except InstanceError as exc:
        fail(str(exc))


def model_keys_or_exit(location: Any, names: list[str]) -> list[Any]:
    missing = location.keys.missing(names)
    if missing:
        raise click.UsageError(f"model(s) {', '.join(missing)} are not assets of the code location "
                               f"({location.origin}): its select/exclude leaves them out")
    return [location.keys.model(n) for n in names]


def _run_config(full_refresh: list[str] | None) -> dict[str, Any]:
    config: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
    if full_refresh:
        config["resources"] = {"run_options": {"config": {"full_refresh": sorted(full_refresh)}}}
    return config


def execute(loaded: LoadedProject, env: str | None, names: list[str], tags: Mapping[str, str],
            title: str, *, checks: list[Any] | None = None, quiet: bool = False,
            full_refresh: list[str] | None = None) -> Outcome:
    """One Dagster run of the models ``names`` (with their checks), or, given ``checks`` (check
    keys) and no names, of those checks only; ``tags`` may carry a partition or a partition range;
    ``full_refresh``: models that start over (the ``run_options`` resource's run config).
    ``quiet``: progress goes to stderr (stdout is kept for a JSON answer)."""
    import dagster as dg

    from ..core.results import ModelResult
    from ..dagster.progress import CheckEvent, StepTimes, subscribe
    from ..instance_location import instance_dir

    started = time.perf_counter()  # Dagster's share below includes its definitions and instance
    location = location_or_exit(loaded)
    if checks is None:
        job = location.defs.resolve_implicit_global_asset_job_def()
        keys = model_keys_or_exit(location, names)
    else:  # a job of just these checks: the implicit job can only select assets
        only = dg.define_asset_job("streamt_cli_checks", selection=dg.AssetSelection.checks(*checks))
        job = dg.Definitions.merge(location.defs, dg.Definitions(jobs=[only])).resolve_job_def(only.name)
        keys = None
    events: list[ModelResult] = []
    seen: list[CheckEvent] = []
    steps: list[StepTimes] = []
    icons = {"success": click.style("✓", fg="green"), "failed": click.style("✗", fg="red"),
             "skipped": click.style("-", fg="yellow")}

    live: LiveLine | None = None

    def echo(message: str) -> None:  # above the live line while it shows
        (live.echo if live is not None else click.echo)(message)

    def show(e: ModelResult | CheckEvent | StepTimes) -> None:
        if isinstance(e, StepTimes):
            steps.append(e)
            return
        if isinstance(e, CheckEvent):
            seen.append(e)
            if checks is not None:
                return  # `streamt test` prints its own table
            mark = icons["success"] if e.passed else icons["failed" if e.severity == "error" else "skipped"]
            verdict = "passed" if e.passed else f"FAILED ({e.severity}): {e.failing_rows:,} failing rows"
            # a model's tests print under it; a source's (run before the models that read it) say which source
            head = f"  {mark} source {e.target.removeprefix('source.')}: test" if e.target.startswith("source.") \
                else f"      {mark} test"
            echo(f"{head} {e.test} {verdict}" + ("" if e.passed else f" - {e.message[:120]}"))
            return
        events.append(e)
        rows = f"{e.rows_written:,} rows" if e.rows_written is not None else \
            "view (no storage)" if e.materialized == "view" else "rows unknown"
        detail = f"{rows}  {e.duration_s:.1f} s{_refresh_suffix(e)}" if e.status == "success" else (e.error or "")[:160]
        echo(f"  {icons.get(e.status, '?')} {e.model:<32} {e.status:<8} {detail}")

    instance = instance_or_exit(loaded)
    click.echo(f"{title} (instance {instance_dir(loaded.project.root)})", err=quiet)
    _import_soon("dagster_streamt.dagster.lineage_emit")  # needed once the run ends; imported while it waits on Spark
    unsubscribe = subscribe(show)
    run_started = time.perf_counter()
    try:
        with instance, live_line(enabled=not quiet and checks is None) as live:
            result = job.execute_in_process(
                instance=instance, asset_selection=keys, tags=dict(tags), raise_on_error=False,
                run_config=_run_config(full_refresh))
            ran = time.perf_counter()
            lineage_note = _emit_lineage(loaded, location.keys, instance, result.run_id)
    finally:
        unsubscribe()
    ended = time.perf_counter()
    if checks is None:
        _summary(names, events, ended - run_started, result.run_id)
        click.echo(time_line(steps, ran - started, ended - ran), err=quiet)
    if lineage_note:
        click.echo(lineage_note, err=quiet)
    if seen and checks is None:
        bad = sorted((c for c in seen if not c.passed), key=lambda c: c.test)
        click.echo(f"tests: {len(seen) - len(bad)} passed, {len(bad)} failed"
                   + (f" ({', '.join(f'{c.test} [{c.severity}]' for c in bad)})" if bad else ""))
    failed_tests = [f"test {c.test} on {c.target} failed (severity error)" for c in seen
                    if not c.passed and c.severity == "error"]
    run_errors = [] if result.success else _failure_reasons(result)
    return Outcome(result.run_id, result.success and not failed_tests, run_errors + failed_tests, seen, run_errors)


@contextmanager
def shared_session() -> Iterator[None]:
    """Runs started inside share one Spark session (stopped at the end unless this process had it
    before): several runs in one process pay for the session once, whatever Spark resource the code
    location binds."""
    from ..dagster.resources import keep_sessions_alive
    from ..spark.session.session import already_running

    borrowed = already_running()
    try:
        with keep_sessions_alive():
            yield
    finally:
        from pyspark.sql import SparkSession

        from ..spark.session.session import stop_session

        active = SparkSession.getActiveSession()
        if active is not None and not borrowed:
            stop_session(active)


def report_failures(outcome: Outcome) -> None:
    for reason in outcome.failures:
        click.echo(click.style(f"error: {reason}", fg="red"), err=True)


def _refresh_suffix(e: Any) -> str:
    """How a table was brought up to date, when it was not simply built (first build, a view)."""
    if e.refresh in ("append", "merge", "upsert"):
        return f"  (incremental: {e.refresh_note})"
    if e.refresh == "unchanged":
        return "  (unchanged: no input changed)"
    if e.refresh == "full" and e.refresh_note and not e.refresh_note.startswith("first build"):
        return f"  (rebuilt: {e.refresh_note})"
    return ""


def _import_soon(module: str) -> None:
    """Import ``module`` in a background thread: the main thread mostly waits on Spark during a run,
    so a module needed after it (OpenLineage's client, about 0.3 s) is ready by then for free."""
    import contextlib
    import importlib
    import threading

    def load() -> None:
        with contextlib.suppress(Exception):  # the import at the point of use reports it
            importlib.import_module(module)

    threading.Thread(target=load, name="streamt-import", daemon=True).start()


def _emit_lineage(loaded: LoadedProject, keys: Any, instance: Any, run_id: str) -> str:
    """The same OpenLineage events the sensor would emit for this run, now (no daemon needed); the
    sensor later sees the run as already emitted."""
    from ..dagster.lineage_emit import emit_runs

    try:
        report, _ = emit_runs(loaded, keys, instance, [(run_id, time.time())])
    except Exception as exc:  # lineage must never fail a run that succeeded
        return f"openlineage: not emitted ({type(exc).__name__}: {exc}); the sensor will retry"
    if report is None:
        return ""
    text = f"openlineage: {report.enqueued} event(s), {report.delivered} delivered, {report.pending} pending"
    return text + (" (retried by the sensor)" if report.pending else "")


def _failure_reasons(result: Any) -> list[str]:
    """Why the Dagster run failed, one line each (model errors were already printed above)."""
    from dagster import DagsterEventType

    out: list[str] = []
    for event in getattr(result, "all_events", []):
        if event.event_type in (DagsterEventType.STEP_FAILURE, DagsterEventType.RUN_FAILURE):
            error = getattr(event.event_specific_data, "error", None)
            while error is not None and error.cause is not None and \
                    error.message.startswith("dagster.") and "Error occurred while executing" in error.message:
                error = error.cause  # Dagster's wrapper of the op's own exception: that one says what happened
            text = _plain(error.message, error.cls_name) if error else (event.message or "").strip().splitlines()
            if text and text[0] not in out:
                out.append(text[0])
    return out


def _plain(message: str, cls_name: str | None) -> list[str]:
    """The error's lines without Dagster's ``module.Class: `` prefix (``dagster._core...Failure: x``
    is an internal path, not something a user can act on)."""
    text = message.strip()
    head, sep, rest = text.partition(": ")
    if sep and cls_name and head.split(".")[-1] == cls_name and head.startswith("dagster."):
        text = rest
    elif sep and cls_name and head.split(".")[-1] == cls_name and head.startswith("dagster_streamt."):
        text = f"{cls_name}: {rest}"  # our own errors: the class says what kind, the text the fix
    return text.splitlines()


def time_line(steps: list[Any], run_s: float, lineage_s: float) -> str:
    """Where the command's time went after the project load: each models step's own account
    (:class:`~dagster_streamt.dagster.progress.StepTimes`), Dagster's share (the rest: its imports,
    the definitions, the instance, the run and its event storage) and OpenLineage's."""
    accounted = sum(s.session + s.models + s.tests for s in steps)
    own = "; ".join(s.line() for s in steps) or "no models step"
    return (f"time: {run_s + lineage_s:.1f} s: {own}; Dagster {max(0.0, run_s - accounted):.1f} s; "
            f"OpenLineage {lineage_s:.1f} s")


def _summary(names: list[str], events: list[Any], elapsed: float, run_id: str) -> None:
    by_model = {e.model: e for e in events}
    click.echo("")
    click.echo(f"{'model':<32} {'status':<8} {'rows':>12} {'seconds':>8}")
    for n in names:
        e = by_model.get(n)
        status = e.status if e else "not run"
        rows = (f"{e.rows_written:,}" if e.rows_written is not None else "view" if e.materialized == "view"
                else "unknown") if e and e.status == "success" else "-"
        secs = f"{e.duration_s:.1f}" if e else "-"
        click.echo(f"{n:<32} {status:<8} {rows:>12} {secs:>8}")
    ok = sum(1 for e in events if e.status == "success")
    click.echo(f"\n{ok}/{len(names)} model(s) succeeded in {elapsed:.1f} s (Dagster run {run_id})")
