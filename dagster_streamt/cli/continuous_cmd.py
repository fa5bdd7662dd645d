"""``streamt run --continuous``: keep the selected stream models running until Ctrl-C or SIGTERM.

Tables and views upstream of a selected stream model run once first (a stream joining a dimension
table needs it to exist); other non-stream models are skipped, since a table downstream of a running
stream has no moment at which it is "done" (refresh it with schedules, sensors or ``streamt run``).
Progress goes to the terminal and, as asset observations, to the project's Dagster instance.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .common import EXIT_INVALID, fail

T = TypeVar("T")

if TYPE_CHECKING:
    from ..api import LoadedProject
    from ..spark.streams.continuous import ContinuousRunner, StreamEvent
    from ..spark.streams.stream_stats import ModelProgress


def run_continuous(loaded: LoadedProject, env: str | None, names: list[str], refresh: list[str],
                   max_restarts: int | None) -> None:
    from ..dagster.continuous_run import stream_plan

    streams, first, skipped = stream_plan(loaded, names)
    for name, why in skipped:
        click.echo(f"  {click.style('-', fg='yellow')} {name:<32} skipped: {why}")
    if not streams:
        click.echo("Nothing to run continuously: the selection has no enabled stream models "
                   "(`materialized: stream`).")
        return
    from .dagster_exec import location_or_exit

    location_or_exit(loaded)  # a broken code location fails now, before a JVM starts (the result is cached)
    try:
        spark = _start_spark(loaded)
        if first:
            _run_once(loaded, env, first, refresh)  # the Dagster run reuses the session, and stops it
            spark = _start_spark(loaded)
    except KeyboardInterrupt:  # before the queries exist there is nothing to stop gracefully
        click.echo("\ninterrupted before the streams started", err=True)
        sys.exit(130)
    _supervise(loaded, spark, streams, [r for r in refresh if r in streams], max_restarts)


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


def _supervise(loaded: LoadedProject, spark: Any, streams: list[str], refresh: list[str],
               max_restarts: int | None) -> None:
    from ..dagster.stream_observations import ObservationReporter
    from ..instance_location import instance_dir
    from ..spark.errors import StreamtSparkError, describe_exception
    from ..spark.session.session import stop_session
    from ..spark.streams.continuous import ContinuousRunner, RestartPolicy
    from .dagster_exec import instance_or_exit, location_or_exit

    project, graph = loaded.project, loaded.graph
    keys = location_or_exit(loaded).keys  # the code location's keys: the UI shows these observations
    dagster_instance = instance_or_exit(loaded)
    upstream = {n: graph.upstream_models(n) for n in streams}
    limit = "unlimited restarts" if max_restarts is None else f"at most {max_restarts} restart(s) in a row"
    click.echo(f"Continuous mode: {len(streams)} stream model(s), {limit}; progress to the terminal and to "
               f"the Dagster instance {instance_dir(project.root)}. Ctrl-C or SIGTERM stops gracefully.")
    try:
        with dagster_instance as instance:
            reporter = ObservationReporter(instance, keys.model)
            printer = Printer()
            runner = ContinuousRunner(
                spark, project, streams, upstream=upstream, full_refresh=refresh,
                policy=RestartPolicy(max_restarts=max_restarts),
                on_progress=lambda p: _both(printer.progress, reporter.progress, p),
                on_event=lambda e: _both(printer.event, reporter.event, e))
            with graceful_stop(runner):
                last = runner.run()
    except StreamtSparkError as exc:
        fail(str(exc))
    except Exception as exc:  # the JVM went away (killed, out of memory): checkpoints are still consistent
        fail(f"the Spark session ended unexpectedly: {describe_exception(exc)}; "
             "run again to resume from the last committed micro-batch")
    finally:
        with suppress(Exception):  # already gone
            stop_session(spark)
    if not _summary(streams, last):
        sys.exit(EXIT_INVALID)


def _both(first: Callable[[T], None], second: Callable[[T], None], item: T) -> None:
    first(item)
    second(item)


@contextmanager
def graceful_stop(runner: ContinuousRunner) -> Iterator[None]:
    """SIGINT/SIGTERM stop the runner gracefully; a second one exits at once (checkpoints are safe
    either way: an interrupted micro-batch is simply redone by the next run)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    received: list[int] = []

    def handler(signum: int, _frame: Any) -> None:
        received.append(signum)
        if len(received) > 1:
            os.write(2, b"\nsecond signal: exiting now; the next run redoes any interrupted micro-batch\n")
            os._exit(130)
        os.write(1, f"\n{signal.Signals(signum).name}: stopping the queries gracefully ...\n".encode())
        runner.stop()

    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


class Printer:
    """Terminal lines for continuous mode: state changes as they happen, a progress line per report
    that saw new data, and one every ``idle_every_s`` for an idle model (its lag keeps growing)."""

    def __init__(self, idle_every_s: float = 30.0) -> None:
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
        click.echo(line)

    def progress(self, p: ModelProgress) -> None:
        if not p.new_batches and p.at - self._last.get(p.model, 0.0) < self.idle_every_s:
            return
        self._last[p.model] = p.at
        if p.batch_id is None:
            click.echo(f"  {time.strftime('%H:%M:%S')} {p.model:<32} waiting for the first micro-batch")
            return
        if p.new_batches:
            what = (f"+{p.new_rows:,} rows ({p.rows_written:,} total)  in {p.input_rows_per_second or 0:,.1f}/s "
                    f"processed {p.processed_rows_per_second or 0:,.1f}/s")
        else:
            what = f"idle ({p.rows_written:,} rows so far)"
        wm = f"  watermark {p.watermark}" if p.watermark else ""
        click.echo(f"  {time.strftime('%H:%M:%S')} {p.model:<32} batch {p.batch_id}  {what}{wm}  {p.lag_text()}")


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
