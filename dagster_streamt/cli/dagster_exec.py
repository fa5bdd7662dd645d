"""Execute models through Dagster in-process on the project's instance (so runs appear in the UI
history), printing progress and a summary, and emit the run's OpenLineage events. Shared by
``streamt run`` and ``streamt backfill``."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click

from ..api import LoadedProject


@dataclass
class Outcome:
    run_id: str
    success: bool
    failures: list[str]


def execute(loaded: LoadedProject, env: str | None, names: list[str], tags: Mapping[str, str],
            title: str, defs: Any = None) -> Outcome:
    """One Dagster run of ``names``; ``tags`` may carry a partition or a partition range. ``defs``:
    definitions built once for several runs (see :func:`shared_session_definitions`)."""
    import dagster as dg

    from ..dagster.definitions import build_definitions
    from ..dagster.instance import instance_dir, project_instance
    from ..dagster.progress import CheckEvent, ModelEvent, subscribe

    defs = defs or build_definitions(loaded.project.root, env, loaded=loaded)
    job = defs.resolve_implicit_global_asset_job_def()
    keys = [dg.AssetKey([n]) for n in names]
    events: list[ModelEvent] = []
    checks: list[CheckEvent] = []
    icons = {"success": click.style("✓", fg="green"), "failed": click.style("✗", fg="red"),
             "skipped": click.style("-", fg="yellow")}

    def show(e: ModelEvent | CheckEvent) -> None:
        if isinstance(e, CheckEvent):
            checks.append(e)
            mark = icons["success"] if e.passed else icons["failed" if e.severity == "error" else "skipped"]
            verdict = "passed" if e.passed else f"FAILED ({e.severity}): {e.failing_rows:,} failing rows"
            click.echo(f"      {mark} test {e.test} {verdict}" + ("" if e.passed else f" - {e.message[:120]}"))
            return
        events.append(e)
        rows = "view (no storage)" if e.rows is None else f"{e.rows:,} rows"
        detail = f"{rows}  {e.seconds:.1f} s" if e.status == "success" else e.message[:160]
        click.echo(f"  {icons.get(e.status, '?')} {e.model:<32} {e.status:<8} {detail}")

    click.echo(f"{title} (instance {instance_dir(loaded.project.root)})")
    unsubscribe = subscribe(show)
    started = time.perf_counter()
    try:
        with project_instance(loaded.project.root) as instance:
            result = job.execute_in_process(
                instance=instance, asset_selection=keys, tags=dict(tags), raise_on_error=False,
                run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
            lineage_note = _emit_lineage(loaded, instance, result.run_id)
    finally:
        unsubscribe()
    elapsed = time.perf_counter() - started
    _summary(names, events, elapsed, result.run_id)
    if lineage_note:
        click.echo(lineage_note)
    if checks:
        bad = [c for c in checks if not c.passed]
        click.echo(f"tests: {len(checks) - len(bad)} passed, {len(bad)} failed"
                   + (f" ({', '.join(f'{c.test} [{c.severity}]' for c in bad)})" if bad else ""))
    failed_tests = [f"test {c.test} on {c.target} failed (severity error)" for c in checks
                    if not c.passed and c.severity == "error"]
    failures = ([] if result.success else _failure_reasons(result)) + failed_tests
    return Outcome(result.run_id, result.success and not failed_tests, failures)


@contextmanager
def shared_session_definitions(loaded: LoadedProject, env: str | None) -> Iterator[Any]:
    """Definitions whose runs share one Spark session (stopped at the end): several runs in one
    process then pay for the definitions and the session once."""
    from ..dagster.definitions import build_definitions
    from ..dagster.resources import SparkResource

    resource = SparkResource(project_dir=str(loaded.project.root), env=env, keep_alive=True)
    try:
        yield build_definitions(loaded.project.root, env, loaded=loaded, spark=resource)
    finally:
        from pyspark.sql import SparkSession

        from ..spark.session import stop_session

        active = SparkSession.getActiveSession()
        if active is not None:
            stop_session(active)


def report_failures(outcome: Outcome) -> None:
    for reason in outcome.failures:
        click.echo(click.style(f"error: {reason}", fg="red"), err=True)


def _emit_lineage(loaded: LoadedProject, instance: Any, run_id: str) -> str:
    """The same OpenLineage events the sensor would emit for this run, now (no daemon needed); the
    sensor later sees the run as already emitted."""
    from ..dagster.lineage_emit import emit_runs

    try:
        report, _ = emit_runs(loaded, instance, [(run_id, time.time())])
    except Exception as exc:  # lineage must never fail a run that succeeded
        return f"openlineage: not emitted ({type(exc).__name__}: {exc}); the sensor will retry"
    if report is None:
        return ""
    text = f"openlineage: {report.enqueued} event(s), {report.delivered} delivered, {report.pending} pending"
    return text + (" (retried by the sensor)" if report.pending else "")


def _failure_reasons(result: Any) -> list[str]:
    """Why the Dagster run failed, one line each (model errors were already printed above)."""
    from dagster._core.events import DagsterEventType

    out: list[str] = []
    for event in getattr(result, "all_events", []):
        if event.event_type in (DagsterEventType.STEP_FAILURE, DagsterEventType.RUN_FAILURE):
            error = getattr(event.event_specific_data, "error", None)
            text = (error.message if error else event.message or "").strip().splitlines()
            if text and text[0] not in out:
                out.append(text[0])
    return out


def _summary(names: list[str], events: list[Any], elapsed: float, run_id: str) -> None:
    by_model = {e.model: e for e in events}
    click.echo("")
    click.echo(f"{'model':<32} {'status':<8} {'rows':>12} {'seconds':>8}")
    for n in names:
        e = by_model.get(n)
        status = e.status if e else "not run"
        rows = (f"{e.rows:,}" if e.rows is not None else "view") if e and e.status == "success" else "-"
        secs = f"{e.seconds:.1f}" if e else "-"
        click.echo(f"{n:<32} {status:<8} {rows:>12} {secs:>8}")
    ok = sum(1 for e in events if e.status == "success")
    click.echo(f"\n{ok}/{len(names)} model(s) succeeded in {elapsed:.1f} s (Dagster run {run_id})")
