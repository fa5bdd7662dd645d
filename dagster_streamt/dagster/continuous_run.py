"""Inside a continuous run: the queries run on a worker thread (:class:`ContinuousRunner`), the op's own
thread turns what they report into Dagster events as it arrives, judges the continuous tests and sends
OpenLineage's streaming events.

The op's thread is the one Dagster interrupts when the run is terminated, so it is the one that must stay
free: it only waits on a queue, and on an interruption asks the runner to stop, keeps reporting until
the last micro-batch is committed and the queries are down, then lets the interruption end the run
(CANCELED in the UI). Committed batches stay committed: the next run resumes from the checkpoints.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import dagster as dg
from openlineage.client.event_v2 import RunEvent, RunState

from ..api import LoadedProject
from ..core import metadata as meta
from ..core.ids import names_of
from ..graph.select import SelectionError, select
from ..openlineage.streaming import StreamingEvents, StreamTotals
from .checks import check_result
from .key_map import KeyMap
from .lineage_emit import emit_live
from .progress import emit
from .resources import SparkResource
from .result_metadata import result_metadata
from .stream_health import keeping_up
from .stream_observations import event_metadata, progress_metadata
from .unchanged import definitions

if TYPE_CHECKING:
    from ..spark.streams.continuous import StreamEvent
    from ..spark.streams.stream_stats import ModelProgress
    from .continuous_job import ContinuousConfig

_NOTICE = "interrupted: stopping the queries gracefully (a second Ctrl-C ends the run at once) ..."
_END = {"stopped": RunState.COMPLETE, "gave_up": RunState.FAIL, "failed": RunState.FAIL, "skipped": RunState.ABORT}


def stream_plan(loaded: LoadedProject, names: list[str]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(stream models to keep running, tables/views to run once first, (skipped model, why)) for a selection;
    ``streamt run --continuous`` and the job decide alike."""
    models, graph = loaded.project.models, loaded.graph
    kind = {n: models[n].materialized or "table" for n in names}
    streams = [n for n in names if kind[n] == "stream" and models[n].enabled]
    feeding = graph.upstream_all(f"model.{n}" for n in streams)
    first: list[str] = []
    skipped: list[tuple[str, str]] = []
    for n in names:
        if n in streams:
            continue
        if not models[n].enabled:
            skipped.append((n, "disabled (enabled: false)"))
        elif kind[n] in ("table", "view") and f"model.{n}" in feeding:
            first.append(n)
        elif kind[n] == "sink":
            skipped.append((n, "a sink: continuous mode runs stream models; run it with `streamt run`"))
        else:
            skipped.append((n, f"a {kind[n]}, not upstream of a stream: refresh it with `streamt run`, a "
                               "schedule or a sensor"))
    return streams, first, skipped


class LiveStreams:
    """One continuous run of the op ``context`` runs, configured by ``config``."""

    def __init__(self, context: dg.OpExecutionContext, loaded: LoadedProject, keys: KeyMap,
                 config: ContinuousConfig) -> None:
        self.context, self.loaded, self.keys, self.config = context, loaded, keys, config
        self.run_id = context.run.run_id
        self.totals: dict[str, StreamTotals] = {}
        self.running: set[str] = set()
        self.fresh: set[str] = set()  # models with rows their continuous tests have not judged yet
        self.lock = threading.Lock()  # totals, running and fresh are read by the side thread
        self.lineage = StreamingEvents(loaded, self.run_id, config.lineage_every_s)
        self.reports: queue.Queue[Any] = queue.Queue()  # what the queries and tests report, for the op's thread
        self.outgoing: queue.Queue[RunEvent] = queue.Queue()  # OpenLineage events for the side thread to send

    # -- the run ---------------------------------------------------------------------------------
    def run(self, spark: SparkResource, refresh: frozenset[str]) -> Iterator[Any]:
        streams, first, skipped = stream_plan(self.loaded, self._names())
        for name, why in skipped:
            self.context.log.info(f"streamt: {name} skipped: {why}")
        if not streams:
            raise dg.Failure("the selection has no enabled stream model (`materialized: stream`) to keep running")
        with spark.session(self.loaded.project) as session:
            if first:
                yield from self._run_first(session, spark, first, refresh)
            yield from self._supervise(session, streams, refresh, spark.on_teardown)

    def _names(self) -> list[str]:
        if self.config.select is None:
            return sorted(n for n in self.loaded.project.models if n in self.keys.models)
        try:
            return sorted(set(names_of(select(self.loaded.graph, self.config.select))) & set(self.keys.models))
        except SelectionError as exc:
            raise dg.Failure(f"run config ops.*.config.select: {exc}") from None

    def _run_first(self, session: Any, spark: SparkResource, first: list[str],
                   refresh: frozenset[str]) -> Iterator[Any]:
        """The tables and views the streams read, brought up to date once before the streams start, with the
        refresh records and definition a models run leaves (a later run or `streamt plan` reads them)."""
        from ..changes.facets import facets_of
        from ..changes.record import definition_record
        from ..spark.runner import run_models

        self.context.log.info(f"streamt: running {len(first)} upstream model(s) once first: {', '.join(first)}")
        plan = self.loaded.graph.run_plan(first)
        failed = []
        facets = facets_of(self.loaded)
        for result in run_models(session, self.loaded.project, plan.order, plan.levels, plan.upstream,
                                 full_refresh=refresh & set(first),
                                 definitions=definitions(self.loaded, spark.engine_key())):
            if result.status == "success":
                yield dg.AssetMaterialization(asset_key=self.keys.model(result.model), metadata={
                    **result_metadata(result),
                    meta.DEFINITION: dg.MetadataValue.json(definition_record(facets, result.model))})
            else:
                failed.append(f"{result.model}: {result.error}")
        if failed:
            raise dg.Failure("upstream models failed; not starting the streams: " + "; ".join(failed))

    def _supervise(self, session: Any, streams: list[str], refresh: frozenset[str],
                   on_teardown: Callable[[Callable[[], None]], Callable[[], None]]) -> Iterator[Any]:
        from ..spark.streams.continuous import ContinuousRunner, RestartPolicy

        graph = self.loaded.graph
        streams = list(graph.run_plan(streams).order)  # a stream starts after the streams it reads
        runner = ContinuousRunner(
            session, self.loaded.project, streams, upstream={n: graph.upstream_models(n) for n in streams},
            full_refresh=refresh & set(streams), policy=RestartPolicy(max_restarts=self.config.max_restarts),
            report_every_s=self.config.report_every_s, on_progress=self.reports.put, on_event=self.reports.put)
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["last"] = runner.run()
            except BaseException as exc:  # reported by the op's thread, which ends the run
                outcome["error"] = exc

        self.outgoing.put(self.lineage.parent_event(RunState.START, _now()))
        worker = threading.Thread(target=work, name="streamt-continuous", daemon=True)
        side = threading.Thread(target=self._side, args=(session, worker), name="streamt-continuous-side",
                                daemon=True)
        worker.start()
        side.start()
        stopped_by: BaseException | None = None
        previous = _sigterm_as_sigint()
        wound_down = threading.Event()

        def wind_down() -> None:
            """Interrupted between two steps of the op, where nothing can be yielded any more."""
            if wound_down.is_set():
                return
            wound_down.set()
            self._canceling()
            emit(_NOTICE)
            runner.stop()
            worker.join()
            side.join()
            self._closing()

        # Dagster raises an interruption that arrives while it handles the op's last event at the op's next
        # step, without resuming this generator: the resource's teardown stops the queries then
        unregister = on_teardown(wind_down)
        try:
            yield from self._pump(worker)
        except GeneratorExit:  # the generator closed while suspended (by Dagster, or collected)
            wind_down()
            raise
        except BaseException as exc:  # DagsterExecutionInterruptedError: the run was terminated
            stopped_by = exc
            self._canceling()
            emit(_NOTICE)
            self.context.log.info(f"streamt: the run was terminated: {_NOTICE}")
            runner.stop()
            yield from self._pump(worker)
        finally:
            unregister()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        side.join()
        error = outcome.get("error")
        last: dict[str, StreamEvent] = outcome.get("last", {})
        failed = sorted(n for n, e in last.items() if e.kind in ("gave_up", "failed"))
        end = RunState.ABORT if stopped_by is not None else RunState.FAIL if error or failed else RunState.COMPLETE
        why = f"stream model(s) failed: {', '.join(failed)}" if failed else str(error) if error else None
        self._send([*self._drain(self.outgoing), self.lineage.parent_event(end, _now(), why or "run terminated")])
        if stopped_by is not None:
            raise stopped_by
        if error is not None:
            raise dg.Failure(f"the Spark session ended unexpectedly: {error}; run again to resume from the last "
                             "committed micro-batch")
        if failed:
            raise dg.Failure(why)

    def _canceling(self) -> None:
        """Terminated from the UI, the run is already canceling; interrupted in a terminal (Ctrl-C,
        SIGTERM to `streamt run --continuous`), it is marked so too: it ends CANCELED, not failed."""
        run = self.context.instance.get_run_by_id(self.run_id)
        if run is not None and run.status == dg.DagsterRunStatus.STARTED:
            self.context.instance.report_run_canceling(run, message="interrupted: stopping the streams")

    def _closing(self) -> None:
        """What the queries reported last, when the op can no longer yield: the state changes recorded on the
        instance (runless), the terminal told, and the run's lineage ended."""
        for item in self._drain(self.reports):
            events = self._on_event(item) if hasattr(item, "kind") else self._on_progress(item) \
                if not isinstance(item, dg.AssetCheckEvaluation) else iter(())
            for event in events:  # runless: the run takes no more events; the metadata still names it
                self.context.instance.report_runless_asset_event(
                    event.with_metadata({**event.metadata, meta.RUN_ID: self.run_id}))
        self._send([*self._drain(self.outgoing), self.lineage.parent_event(RunState.ABORT, _now(), "run terminated")])

    def _pump(self, worker: threading.Thread) -> Iterator[Any]:
        """Turn reports into Dagster events until the queries are down and every report is out. This is the
        thread Dagster interrupts: it waits and yields, and leaves Spark and I/O to the other threads (an
        interruption landing inside a Spark call would break the call, not stop the run)."""
        while worker.is_alive() or not self.reports.empty():
            try:
                item = self.reports.get(timeout=0.5)
            except queue.Empty:
                continue
            if isinstance(item, dg.AssetCheckEvaluation):
                yield item
            elif hasattr(item, "kind"):
                yield from self._on_event(item)
            else:
                yield from self._on_progress(item)

    def _side(self, session: Any, worker: threading.Thread) -> None:
        """Beside the queries: OpenLineage delivery (START/RUNNING/end events) and the continuous tests."""
        next_lineage = next_check = 0.0
        while worker.is_alive():
            time.sleep(0.5)
            now = time.monotonic()
            with self.lock:  # a model's START is queued under this lock as it joins `running`: drained first
                events = self._drain(self.outgoing)
                totals = [self.totals[n] for n in sorted(self.running)] if now >= next_lineage else []
            if totals:
                next_lineage = now + self.config.lineage_every_s
                events += [self.lineage.parent_event(RunState.RUNNING, _now())] + [
                    self.lineage.model_event(RunState.RUNNING, t, _now()) for t in totals]
            if events:
                self._send(events)
            if self.fresh and now >= next_check and worker.is_alive():
                next_check = now + self.config.check_every_s
                self._judge(session)

    @staticmethod
    def _drain(box: queue.Queue[Any]) -> list[Any]:
        out = []
        while not box.empty():
            out.append(box.get_nowait())
        return out

    # -- what the queries report -----------------------------------------------------------------
    def _on_progress(self, p: ModelProgress) -> Iterator[Any]:
        emit(p)  # `streamt run --continuous` prints it
        with self.lock:
            self.totals[p.model] = StreamTotals(p.model, p.input_rows, p.rows_written, p.batches)
            if p.new_batches:
                self.fresh.add(p.model)
        if not p.new_batches:
            return
        md = progress_metadata(p)
        if p.latency_s is not None:
            md["batch_duration_s"] = round(p.latency_s, 3)
        fits = keeping_up(p.trigger, p.latency_s)
        if fits is not None:  # a batch longer than the trigger interval: the stream falls behind its input
            md["keeping_up"] = fits
        yield dg.AssetMaterialization(asset_key=self.keys.model(p.model), metadata=md,
                                      description=f"{p.new_rows:,} row(s) in {p.new_batches} micro-batch(es)")

    def _on_event(self, e: StreamEvent) -> Iterator[Any]:
        emit(e)
        log = self.context.log.error if e.kind in ("failed", "gave_up") else self.context.log.info
        log(f"streamt: {e.model} {e.kind.replace('_', ' ')}" + (f": {e.message}" if e.message else ""))
        with self.lock:
            if e.totals is not None:
                t = e.totals
                self.totals[e.model] = StreamTotals(e.model, t.input_rows, t.rows_written, t.batches)
            totals = self.totals.setdefault(e.model, StreamTotals(e.model))
            if e.kind == "started" and e.model not in self.running:
                self.running.add(e.model)
                self.outgoing.put(self.lineage.model_event(RunState.START, totals, _now()))
            elif e.kind in _END and not (e.kind == "failed" and e.delay_s is not None):  # a retried failure goes on
                events = [] if e.model in self.running else [self.lineage.model_event(RunState.START, totals, _now())]
                self.running.discard(e.model)
                for event in [*events, self.lineage.model_event(_END[e.kind], totals, _now(), e.message or None)]:
                    self.outgoing.put(event)
        yield dg.AssetObservation(asset_key=self.keys.model(e.model), metadata=event_metadata(e))

    def _judge(self, session: Any) -> None:
        """The continuous tests of the models that got rows since they were last judged, as check evaluations
        for the op's thread to report."""
        from ..checks.execute import execute_test

        project = self.loaded.project
        with self.lock:
            fresh, self.fresh = self.fresh, set()
        for name in sorted(fresh):
            for test in sorted((t for t in project.tests.values() if t.type == "continuous" and t.model == name
                                and t.name in self.keys.tests), key=lambda t: t.name):
                r = check_result(self.keys, test, execute_test(session, project, test, run_id=self.run_id))
                key = self.keys.tests[test.name]
                self.reports.put(dg.AssetCheckEvaluation(
                    asset_key=key.asset_key, check_name=key.name, passed=r.passed, metadata=r.metadata,
                    severity=r.severity, description=r.description))

    def _send(self, events: list[RunEvent]) -> None:
        """OpenLineage events go through the outbox: a receiver that is down gets them later, in order."""
        try:
            emit_live(self.loaded, self.run_id, events)
        except Exception as exc:  # lineage must never stop the streams
            self.context.log.warning(f"streamt: OpenLineage events not queued: {exc}")


def _sigterm_as_sigint() -> Any:
    """SIGTERM interrupts the op as SIGINT does; returns the handler it replaced (None off the main thread).

    Dagster maps SIGTERM to the handler that only records an interruption for the op's next step, and
    this op takes its next step only when a report comes: a SIGTERM (systemd, Kubernetes, `timeout`, a
    process group signalled) would then wait for the next micro-batch, or forever on an idle stream."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))


def _now() -> datetime:
    return datetime.now(UTC)

