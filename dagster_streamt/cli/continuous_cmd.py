"""``streamt run --continuous``: keep the selected stream models running until Ctrl-C or SIGTERM.

Tables and views upstream of a selected stream model run once first (a stream joining a dimension
table needs it to exist); other non-stream models are skipped, since a table downstream of a running
stream has no moment at which it is "done" (refresh it with schedules, sensors or ``streamt run``).
It is the ``<project>_continuous`` job (:mod:`dagster_streamt.dagster.continuous_job`) executed in this
process on the project's instance, as ``streamt run`` executes its runs: progress goes to the terminal and
to the run in the UI (each batch a materialization), and the run sends its OpenLineage events itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

import click

from .common import EXIT_INVALID, fail

if TYPE_CHECKING:
    from ..api import LoadedProject
    from ..spark.streams.continuous import StreamEvent
    from ..spark.streams.stream_stats import ModelProgress


def run_continuous(loaded: LoadedProject, env: str | None, names: list[str], refresh: list[str],
                   max_restarts: int | None) -> None:
    """The project's ``<project>_continuous`` job, executed in this process on the project's instance: the
    run shows in the UI (live batches, CANCELED once stopped) and sends its OpenLineage events itself."""
    from ..dagster.continuous_run import stream_plan

    streams, first, skipped = stream_plan(loaded, names)
    for name, why in skipped:
        click.echo(f"  {click.style('-', fg='yellow')} {name:<32} skipped: {why}")
    if not streams:
        click.echo("Nothing to run continuously: the selection has no enabled stream models "
                   "(`materialized: stream`).")
        return
    from ..dagster.continuous_job import continuous_job_name
    from ..instance_location import instance_dir
    from ..spark.session.session import stop_session
    from .dagster_exec import instance_or_exit, location_or_exit

    location = location_or_exit(loaded)  # a broken code location fails now, before a JVM starts
    job_name = continuous_job_name(loaded)
    if job_name not in {j.name for j in location.defs.jobs or ()} or location.keys.missing(streams):
        fail(f"the code location ({location.origin}) runs no stream model of this selection (its select/exclude "
             "leaves them out)")
    job = location.defs.resolve_job_def(job_name)
    limit = "unlimited restarts" if max_restarts is None else f"at most {max_restarts} restart(s) in a row"
    try:
        spark = _start_spark(loaded)
        if first:  # an ordinary `streamt run` (its tests, records and summary); it reuses the session, and stops it
            _run_once(loaded, env, first, refresh)
            spark = _start_spark(loaded)  # borrowed by the continuous run's resource, stopped here
    except KeyboardInterrupt:  # before the queries exist there is nothing to stop gracefully
        click.echo("\ninterrupted before the streams started", err=True)
        sys.exit(130)
    click.echo(f"Continuous mode: {len(streams)} stream model(s), "
               f"{limit}; progress to the terminal and to the Dagster instance {instance_dir(loaded.project.root)} "
               f"(job {job_name}). Ctrl-C or SIGTERM stops gracefully.")
    # the terminal as it is now: Dagster captures a step's output and tees it back through a helper process,
    # which a Ctrl-C or a SIGTERM to the process group stops, and the lines that matter most come after that
    terminal = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    printer, last = Printer(out=terminal), dict[str, "StreamEvent"]()
    run_config = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}},
                  "ops": {f"{loaded.project.ident}_streams": {"config": {"select": " ".join(streams),
                                                                           "max_restarts": max_restarts}}},
                  "resources": {"run_options": {"config": {"full_refresh": sorted(set(refresh) & set(streams))}}}}
    try:
        with instance_or_exit(loaded) as instance, listening(printer, last):  # Dagster: SIGTERM as SIGINT
            result = job.execute_in_process(instance=instance, run_config=run_config, raise_on_error=False)
    finally:
        terminal.close()
        with suppress(Exception):  # already gone
            stop_session(spark)
    ok = _summary(streams, last)
    if not result.success and not last:
        errors = [e.message for e in result.all_events if e.is_failure and e.message]
        fail(errors[-1] if errors else "the continuous run failed before its streams started")
    if not ok:
        sys.exit(EXIT_INVALID)


def _start_spark(loaded: LoadedProject) -> Any:
    """The session, started while SIGTERM is ignored: the embedded JVM inherits that and then never
    installs its own SIGTERM handler, so a SIGTERM sent to the whole process group (systemd, `timeout`,
    `kill -- -PGID`) reaches only us and we stop the queries, instead of the JVM exiting under them."""
    from ..spark.errors import StreamtSparkError
    from ..spark.session.session import create_session

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN) if main else None
    try:
        return create_session(loaded.project)
    except StreamtSparkError as exc:
        fail(str(exc))
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def _run_once(loaded: LoadedProject, env: str | None, first: list[str], refresh: list[str]) -> None:
    """The upstream tables and views as one ordinary ``streamt run`` (a Dagster run, with its summary)."""
    from .materialize import materialize

    click.echo(f"Running {len(first)} upstream model(s) once before the streams start: {', '.join(first)}")
    if not materialize(loaded, env, first, refresh):
        fail("upstream models failed; not starting the streams")
    click.echo("")


@contextmanager
def listening(printer: Printer, last: dict[str, Any]) -> Iterator[None]:
    """The run's stream events and progress, as the op reports them in this process, to the terminal."""
    from ..dagster.progress import subscribe
    from ..spark.streams.continuous import StreamEvent
    from ..spark.streams.stream_stats import ModelProgress

    def show(item: Any) -> None:
        if isinstance(item, str):  # the run's own notices (stopping)
            click.echo(item, file=printer.out)
        elif isinstance(item, StreamEvent):
            last[item.model] = item
            printer.event(item)
        elif isinstance(item, ModelProgress):
            printer.progress(item)

    unsubscribe = subscribe(show)
    try:
        yield
    finally:
        unsubscribe()


class Printer:
    """Terminal lines for continuous mode: state changes as they happen, a progress line per report
    that saw new data, and one every ``idle_every_s`` for an idle model (its lag keeps growing)."""

    def __init__(self, idle_every_s: float = 30.0, out: Any = None) -> None:
        self.out = out  # None: stdout
        self.idle_every_s = idle_every_s
        self._last: dict[str, float] = {}

    def event(self, e: StreamEvent) -> None:
        if e.kind == "started":
            line = f"  {click.style('▶', fg='green')} {e.model:<32} {e.message}"
        elif e.kind == "failed":
            retry = f"; restarting in {e.delay_s:.1f} s (failure {e.attempt})" if e.delay_s is not None else ""
            line = f"  {click.style('✗', fg='red')} {e.model:<32} failed: {e.message[:300]}{retry}"
        elif e.kind == "gave_up":
            line = f"  {click.style('✗', fg='red')} {e.model:<32} gave up: {e.message[:300]}"
        elif e.kind == "skipped":
            line = f"  {click.style('-', fg='yellow')} {e.model:<32} skipped: {e.message}"
        else:
            t = e.totals
            done = f"{t.rows_written:,} rows in {t.batches} batch(es), {t.restarts} restart(s); " if t else ""
            line = f"  {click.style('■', fg='cyan')} {e.model:<32} stopped: {done}{e.message}"
        click.echo(line, file=self.out)

    def progress(self, p: ModelProgress) -> None:
        if not p.new_batches and p.at - self._last.get(p.model, 0.0) < self.idle_every_s:
            return
        self._last[p.model] = p.at
        if p.batch_id is None:
            click.echo(f"  {time.strftime('%H:%M:%S')} {p.model:<32} waiting for the first micro-batch", file=self.out)
            return
        if p.new_batches:
            what = (f"+{p.new_rows:,} rows ({p.rows_written:,} total)  in {p.input_rows_per_second or 0:,.1f}/s "
                    f"processed {p.processed_rows_per_second or 0:,.1f}/s")
        else:
            what = f"idle ({p.rows_written:,} rows so far)"
        wm = f"  watermark {p.watermark}" if p.watermark else ""
        click.echo(f"  {time.strftime('%H:%M:%S')} {p.model:<32} batch {p.batch_id}  {what}{wm}  {p.lag_text()}",
                   file=self.out)


def _summary(streams: list[str], last: dict[str, StreamEvent]) -> bool:
    """Print the final table; True when every model stopped cleanly."""
    click.echo("")
    click.echo(f"{'model':<32} {'status':<8} {'batches':>8} {'rows':>12} {'restarts':>8}")
    ok = True
    for name in streams:
        e = last.get(name)
        status = {"gave_up": "failed"}.get(e.kind, e.kind) if e else "not run"
        ok = ok and status == "stopped"
        t = e.totals if e else None
        click.echo(f"{name:<32} {status:<8} {t.batches if t else '-':>8} "
                   f"{f'{t.rows_written:,}' if t else '-':>12} {t.restarts if t else '-':>8}")
    return ok
