"""Continuous mode: stream models as long-running queries with a processing-time trigger (or, for a model
with ``advanced.spark.trigger: real_time``, Spark's Real-time Mode from Kafka to its topic: :mod:`.realtime`).

The queries are built by :func:`~.stream.start_stream`, the same code available-now runs use, under the
same checkpoint lock, so a continuous run and a ``streamt run`` resume from each other's checkpoints
without losing or repeating rows. A query that fails at run time is restarted with exponential backoff
(a bad file or a lost executor may be fixed meanwhile); a model that cannot even be built (SQL, config,
an incompatible checkpoint) fails once, because restarting cannot fix it. ``stop()`` lets a running
micro-batch finish (up to ``drain_s``), then stops the queries: committed batches stay committed and
an interrupted one is redone by the next run, which the file sink's log makes exactly-once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from ...spec.project import Project
from ...spec.topics import model_topic
from ..delta.conflicts import model_error
from ..delta.delta_table import is_delta_table
from ..errors import describe_exception
from ..run.context import RunContext
from ..run.progress import trigger_options
from ..storage.reset import local_topic, reset_model
from ..storage.state import check_project_root
from .checkpoints import explain_failure, is_spark_incompatibility
from .realtime import start_real_time
from .stream import StartedStream, checkpoint_lock, record_stream, start_stream
from .stream_stats import ModelProgress, ProgressTracker
from .topics import start_topic_query, topic_query_name

log = logging.getLogger(__name__)

DEFAULT_TRIGGER = "5 seconds"
EventKind = Literal["started", "failed", "gave_up", "skipped", "stopped"]


@dataclass(frozen=True)
class RestartPolicy:
    """Exponential backoff for failed queries: ``initial_s`` doubling up to ``max_s``; ``max_restarts``
    consecutive failures before giving up on a model (None: never give up, like a supervised service).
    The streak resets once the restarted query commits a batch with data or stays up ``healthy_after_s``."""

    initial_s: float = 1.0
    factor: float = 2.0
    max_s: float = 60.0
    max_restarts: int | None = None
    healthy_after_s: float = 60.0

    def delay(self, failures: int) -> float:
        return min(self.max_s, self.initial_s * self.factor ** max(0, failures - 1))


@dataclass(frozen=True)
class StreamEvent:
    """A change of a model's state; ``delay_s`` is the backoff before the next attempt (failed)."""

    model: str
    kind: EventKind
    message: str = ""
    attempt: int = 0
    delay_s: float | None = None
    totals: ModelProgress | None = None  # stopped / gave_up: what this continuous run did


def continuous_trigger(trigger: str | None, model: str, default: str = DEFAULT_TRIGGER) -> dict[str, Any]:
    """The model's processing-time (or real-time) trigger; ``default`` when it has none or a run-once trigger."""
    options = trigger_options(trigger, model, real_time=True)
    return options if "processingTime" in options or "realTime" in options else {"processingTime": default}


def describe_trigger(trigger: Mapping[str, Any]) -> str:
    if "realTime" in trigger:
        return f"real-time mode (checkpoint every {trigger['realTime']})"
    return f"trigger every {trigger.get('processingTime', '')}"


@dataclass
class _Stream:
    name: str
    trigger: dict[str, Any]
    tracker: ProgressTracker
    started: StartedStream | None = None
    publisher: StreamingQuery | None = None  # the query publishing its topic (a broker or local topics)
    publish_ctx: RunContext | None = None  # set while its topic publication waits for the table's first commit
    state: Literal["running", "waiting", "failed", "stopped"] = "waiting"
    failures: int = 0  # current streak of consecutive failures
    retry_at: float = 0.0
    up_since: float = 0.0
    last_report: float = field(default_factory=time.monotonic)
    ctx: RunContext | None = None  # set while the model waits for its input streams' first batch

    @property
    def real_time(self) -> bool:
        return "realTime" in self.trigger


class ContinuousRunner:
    """Run ``models`` (stream models, topological order) until :meth:`stop`; see the module docstring.

    ``on_progress`` gets a :class:`ModelProgress` per running model every ``report_every_s``;
    ``on_event`` gets every :class:`StreamEvent`. Both are called from the thread running :meth:`run`.
    """

    def __init__(self, spark: SparkSession, project: Project, models: Sequence[str], *,
                 upstream: Mapping[str, Collection[str]] | None = None, full_refresh: Collection[str] = (),
                 policy: RestartPolicy | None = None, report_every_s: float = 5.0,
                 default_trigger: str = DEFAULT_TRIGGER, drain_s: float = 10.0,
                 on_progress: Callable[[ModelProgress], None] | None = None,
                 on_event: Callable[[StreamEvent], None] | None = None) -> None:
        self.spark = spark
        self.project = project
        self.models = list(models)
        self.upstream = upstream or {}
        self.full_refresh = frozenset(full_refresh)
        self.policy = policy or RestartPolicy()
        self.report_every_s = report_every_s
        self.default_trigger = default_trigger
        self.drain_s = drain_s
        self.on_progress = on_progress
        self.on_event = on_event
        self._stop = threading.Event()
        self._streams: dict[str, _Stream] = {}

    def stop(self) -> None:
        """Ask :meth:`run` to stop the queries gracefully and return (safe from any thread or signal handler)."""
        self._stop.set()

    def run(self) -> dict[str, StreamEvent]:
        """Start the models and supervise them until :meth:`stop` or until none is left running.

        Returns each model's last event (stopped, gave_up, failed or skipped). Raises
        :class:`~.state.ProjectMovedError` before starting anything when the project was moved.
        """
        ctx = RunContext.create(self.spark, self.project)
        check_project_root(ctx.paths, self.full_refresh)
        last: dict[str, StreamEvent] = {}
        with ExitStack() as locks:
            try:
                for name in self.models:
                    if self._stop.is_set():
                        break
                    event = self._first_start(ctx, locks, name)
                    if event is not None:
                        last[name] = event
                tick = min(0.5, self.report_every_s)
                while not self._stop.is_set() and any(s.state in ("running", "waiting")
                                                      for s in self._streams.values()):
                    for stream in self._streams.values():
                        event = self._supervise(stream)
                        if event is not None:
                            last[stream.name] = event
                    self._stop.wait(tick)
            finally:
                for stream in self._streams.values():
                    if stream.state in ("running", "waiting"):
                        last[stream.name] = self._shutdown(stream)
        return last

    # -- starting --------------------------------------------------------------------------------
    def _first_start(self, ctx: RunContext, locks: ExitStack, name: str) -> StreamEvent | None:
        """Lock, (refresh,) and start one model; a model that cannot start fails for good."""
        blocked = sorted(u for u in self.upstream.get(name, ()) if u in self._streams
                         and self._streams[u].state == "failed")
        if blocked:
            why = f"upstream model {blocked[0]} failed to start"
            self._streams[name] = _Stream(name, {}, ProgressTracker(name, ""), state="failed")
            return self._emit(StreamEvent(name, "skipped", why))
        model = self.project.models.get(name)
        try:
            if model is None:
                raise ValueError(f"model {name} is not defined in the project")
            if model.materialized != "stream":
                raise ValueError(f"model {name} is {model.materialized or 'table'}, not a stream model")
            trigger = continuous_trigger(model.advanced.spark.trigger, name, self.default_trigger)
            stream = _Stream(name, trigger, ProgressTracker(name, trigger.get("processingTime") or "real-time"))
            locks.enter_context(checkpoint_lock(ctx, name))
            if "realTime" not in trigger and model_topic(self.project, model) is not None:
                locks.enter_context(checkpoint_lock(ctx, topic_query_name(model), "topic publication"))
            if name in self.full_refresh:
                reset_model(ctx.paths, name, local_topic(self.project, model))
            self._streams[name] = stream
            waiting_for = self._unwritten_inputs(ctx, name)
            if waiting_for:  # a fresh project: the stream it reads has not committed its first batch yet
                stream.ctx, stream.retry_at = ctx, time.monotonic() + 1.0
                return None
            self._start(ctx, stream)
        except Exception as exc:
            message = model_error(name, exc)
            failed = self._streams.setdefault(name, _Stream(name, {}, ProgressTracker(name, "")))
            failed.state = "failed"
            return self._emit(StreamEvent(name, "failed", message))
        return self._emit(StreamEvent(name, "started", describe_trigger(stream.trigger)))

    def _unwritten_inputs(self, ctx: RunContext, name: str) -> list[str]:
        """The stream models running here that ``name`` reads and that have no output table yet."""
        return sorted(u for u in self.upstream.get(name, ()) if u in self._streams
                      and self._streams[u].state in ("running", "waiting")
                      and not is_delta_table(ctx.warehouse.data_dir(u)))

    def _deferred_start(self, stream: _Stream) -> StreamEvent | None:
        """Start a model that waited for its input streams' first batch, once they have one."""
        ctx = stream.ctx
        assert ctx is not None
        if self._unwritten_inputs(ctx, stream.name):
            stream.retry_at = time.monotonic() + 1.0
            return None
        stream.ctx = None
        try:
            self._start(ctx, stream)
        except Exception as exc:
            return self._failed(stream, exc)
        return self._emit(StreamEvent(stream.name, "started", describe_trigger(stream.trigger)))

    def _start(self, ctx: RunContext, stream: _Stream) -> None:
        model = self.project.models[stream.name]
        mctx = ctx.for_model(model)
        with mctx.scheduler_pool(stream.name):
            started = (start_real_time if stream.real_time else start_stream)(mctx, model, stream.trigger)
        if not stream.real_time:  # real-time mode writes straight to the topic: nothing stored in the warehouse
            try:  # registered now, not when the query ends: downstream models read the output while it runs
                record_stream(started)
                if model_topic(self.project, model) is not None and started.appends:
                    stream.publish_ctx = mctx  # its topic follows the stored output, batch by batch,
                    self._publish(stream)  # once the stream's own first batch has created the table
            except Exception:
                started.query.stop()
                raise
        stream.started, stream.state, stream.up_since = started, "running", time.monotonic()

    # -- supervising -----------------------------------------------------------------------------
    def _supervise(self, stream: _Stream) -> StreamEvent | None:
        now = time.monotonic()
        if stream.state == "waiting" and now >= stream.retry_at:
            return self._deferred_start(stream) if stream.ctx is not None else self._restart(stream)
        if stream.state != "running" or stream.started is None:
            return None
        query = stream.started.query
        if stream.publish_ctx is not None:
            try:
                self._publish(stream)
            except Exception as unpublished:
                return self._failed(stream, unpublished)
        publisher = stream.publisher
        if publisher is not None and not publisher.isActive:  # publishing failed: restart both queries
            self._stop_queries(stream)
            return self._failed(stream, publisher.exception() or RuntimeError("its topic publication stopped"))
        active = query.isActive
        committed = stream.tracker.consume(query.recentProgress)
        if committed or now - stream.up_since >= self.policy.healthy_after_s:
            stream.failures = 0  # healthy again: the next failure starts the backoff over
        if not active:
            exc = query.exception()
            if exc is None:  # stopped by someone else (e.g. spark.streams.active[...].stop())
                stream.state = "stopped"
                return self._emit(StreamEvent(stream.name, "stopped", "query stopped outside streamt",
                                              totals=stream.tracker.snapshot()))
            return self._failed(stream, exc)
        if now - stream.last_report >= self.report_every_s:
            stream.last_report = now
            _call(self.on_progress, stream.tracker.snapshot(running=True))
        return None

    def _publish(self, stream: _Stream) -> None:
        """Start the topic publication once the model's table exists. Not before: creating the table for it
        would race the stream's own first commit, and Delta fails one of two first commits
        (ProtocolChangedException), the stream's as readily as ours."""
        ctx = stream.publish_ctx
        if ctx is None or not is_delta_table(ctx.warehouse.data_dir(stream.name)):
            return
        model = self.project.models[stream.name]
        with ctx.scheduler_pool(stream.name):
            stream.publisher = start_topic_query(ctx, model, stream.trigger)
        stream.publish_ctx = None

    def _restart(self, stream: _Stream) -> StreamEvent | None:
        ctx = RunContext.create(self.spark, self.project)  # fresh views; quarantines what arrived meanwhile
        try:
            self._start(ctx, stream)
        except Exception as exc:
            return self._failed(stream, exc)
        stream.tracker.restarts += 1
        return self._emit(StreamEvent(stream.name, "started", f"restarted (attempt {stream.failures + 1})",
                                      attempt=stream.failures + 1))

    def _stop_queries(self, stream: _Stream) -> None:
        for query in (stream.started.query if stream.started else None, stream.publisher):
            if query is not None and query.isActive:
                try:
                    query.stop()
                except Exception as exc:  # the session may already be gone
                    log.warning("stream model %s: stopping a query: %s", stream.name, describe_exception(exc))

    def _failed(self, stream: _Stream, exc: BaseException) -> StreamEvent:
        self._stop_queries(stream)
        stream.started, stream.publisher, stream.publish_ctx = None, None, None
        stream.failures += 1
        message = model_error(stream.name, explain_failure(stream.name, exc))
        limit = self.policy.max_restarts
        hopeless = _incompatible(exc)
        if hopeless or (limit is not None and stream.failures > limit):
            stream.state = "failed"
            why = "restarting cannot fix it" if hopeless else f"{limit} restart(s) failed"
            return self._emit(StreamEvent(stream.name, "gave_up", f"{message} (giving up: {why})",
                                          attempt=stream.failures, totals=stream.tracker.snapshot()))
        delay = self.policy.delay(stream.failures)
        stream.state, stream.retry_at = "waiting", time.monotonic() + delay
        return self._emit(StreamEvent(stream.name, "failed", message, attempt=stream.failures, delay_s=delay))

    # -- stopping --------------------------------------------------------------------------------
    def _shutdown(self, stream: _Stream) -> StreamEvent:
        """Let a running micro-batch finish (up to ``drain_s``), then stop the query."""
        if stream.started is not None:
            query = stream.started.query
            # a real-time batch lasts its checkpoint interval: stopping mid-batch loses nothing committed
            deadline = time.monotonic() + (0.0 if stream.real_time else self.drain_s)
            try:
                while query.isActive and query.status.get("isTriggerActive") and time.monotonic() < deadline:
                    time.sleep(0.1)
                query.stop()
                stream.tracker.consume(query.recentProgress)
                pending = stream.publish_ctx is not None and is_delta_table(
                    stream.publish_ctx.warehouse.data_dir(stream.name))  # committed before its publication began
                if stream.publisher is not None or pending:  # the topic catches up with everything stored, once
                    self._stop_queries(stream)
                    model = self.project.models[stream.name]
                    ctx = RunContext.create(self.spark, self.project).for_model(model)
                    start_topic_query(ctx, model, {"availableNow": True}).awaitTermination()
            except Exception as exc:  # the session may already be gone (Ctrl-C twice, JVM exit)
                log.warning("stream model %s: stopping its query: %s", stream.name, describe_exception(exc))
        self._stop_queries(stream)
        stream.state, stream.started, stream.publisher, stream.publish_ctx = "stopped", None, None, None
        return self._emit(StreamEvent(stream.name, "stopped", "checkpoint saved; the next run resumes here",
                                      totals=stream.tracker.snapshot()))

    # -- callbacks -------------------------------------------------------------------------------
    def _emit(self, event: StreamEvent) -> StreamEvent:
        _call(self.on_event, event)
        return event


def _call(fn: Callable[[Any], None] | None, arg: Any) -> None:
    """Callbacks report; they must never take the queries down (a locked SQLite event log, a closed pipe)."""
    if fn is None:
        return
    try:
        fn(arg)
    except Exception:
        log.warning("continuous mode: progress callback failed", exc_info=True)


def _incompatible(exc: BaseException) -> bool:
    """The checkpoint no longer fits the query (Spark's refusal or our fingerprint check)."""
    return is_spark_incompatibility(exc) or "no longer fits its checkpoint" in str(exc)
