"""Run selected models in one session: each as soon as its upstream models are done, independent
ones concurrently, each result yielded as soon as it is known. A failed model's downstream models are
skipped; the rest go on."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace

from pyspark.sql import SparkSession

from ..core.results import ModelResult, failed, skipped
from ..spec.models import Model
from ..spec.project import Project
from ..spec.topics import model_topic
from . import up_to_date
from .contract_check import contract_violation
from .delta.conflicts import model_error
from .delta.delta_table import Commit, current_commit
from .delta.input_files import Snapshot
from .run import live
from .run.context import RunContext
from .run.partitions import PartitionScope
from .sinks.sink import materialize_sink
from .sources.snapshots import model_version, source_snapshot
from .storage.state import check_project_root
from .streams.stream import materialize_stream
from .streams.topics import publish_topic
from .tables.table import materialize_table
from .tables.view import materialize_view

log = logging.getLogger(__name__)

Materializer = Callable[[RunContext, Model, bool], ModelResult]
MATERIALIZERS: dict[str, Materializer] = {
    "table": materialize_table,
    "view": materialize_view,
    "stream": materialize_stream,
    "sink": materialize_sink,
}
MAX_PARALLEL = 8


def run_models(spark: SparkSession, project: Project, models: Sequence[str], levels: Sequence[Sequence[str]],
               upstream: Mapping[str, AbstractSet[str]], full_refresh: set[str] | frozenset[str] = frozenset(),
               partition: PartitionScope | None = None, gates: Collection[str] | None = None,
               definitions: up_to_date.Definitions | None = None,
               blocked: Mapping[str, str] | None = None,
               on_start: Callable[[str], None] | None = None) -> ModelRun:
    """Run ``models`` (topological order): iterate the returned :class:`ModelRun` for one
    :class:`ModelResult` per model as it finishes.

    ``levels`` groups models that may run at the same time; ``upstream[m]`` are the models ``m`` reads
    (names outside ``models`` are read from the warehouse). ``full_refresh`` models start over.
    ``partition``: the partitions this run writes of the partitioned models in ``models`` (they all
    share one partitioning). ``gates``: the models whose result may stop their downstream
    (:meth:`ModelRun.block`, for those with blocking checks); the downstream of any other model starts
    before its result is consumed. None: every model gates. ``definitions``: given, each model that
    succeeds keeps its up-to-date record (:mod:`.up_to_date`), so a later run that finds nothing new
    for it needs no Spark. ``blocked``: models skipped before they start, with why (a blocking test
    of a source they read failed), and so their downstream. ``on_start``: called with each model's name as
    it starts, in the thread that iterates the run (a log line marks the start of each model).
    Raises :class:`~.state.ProjectMovedError` (before running anything) for a moved project.

    >>> run = run_models(spark, project, ["orders", "totals"], [["orders"], ["totals"]],
    ...                  {"totals": {"orders"}})  # doctest: +SKIP
    >>> for result in run:  # doctest: +SKIP
    ...     if result.model == "orders" and not orders_look_right():
    ...         run.block("orders", "blocking test orders_valid failed")  # totals is skipped
    """
    ctx = replace(RunContext.create(spark, project), partition=partition, up_to_date=definitions)
    check_project_root(ctx.paths, frozenset(full_refresh))
    return ModelRun(ctx, list(models), _levels(models, levels), upstream, frozenset(full_refresh),
                    frozenset(gates) if gates is not None else None, blocked or {}, on_start)


class ModelRun:
    """One run of a selection: an iterable of :class:`ModelResult`, one per model as each finishes.

    Its consumer may stop a finished model's downstream while handling that model's result
    (:meth:`block`, say a failed blocking check); the run itself blocks the downstream of a failed or
    skipped model. Iterate it once."""

    def __init__(self, ctx: RunContext, models: list[str], levels: list[list[str]],
                 upstream: Mapping[str, AbstractSet[str]], full_refresh: frozenset[str],
                 gates: frozenset[str] | None, blocked: Mapping[str, str],
                 on_start: Callable[[str], None] | None = None) -> None:
        # model -> why it (given before the run) or its downstream is skipped (the first reason wins)
        self._blocked: dict[str, str] = dict(blocked)
        self._ctx = ctx
        self._results = _run(ctx, models, levels, upstream, full_refresh, self._blocked, gates, on_start)

    def block(self, model: str, reason: str) -> None:
        """Skip ``model``'s downstream models, saying ``reason``; called for a gating model's result
        before the next one is asked for, it applies to every model that depends on it."""
        self._blocked.setdefault(model, reason)

    def __iter__(self) -> Iterator[ModelResult]:
        return self._results

    @property
    def timings(self) -> dict[str, float]:
        """Seconds of the work beside the models, by source: its quarantine query (known once it ended)."""
        return dict(self._ctx.timings)


def _levels(models: Sequence[str], levels: Sequence[Sequence[str]]) -> list[list[str]]:
    """``levels`` restricted to the selection; any selected model missing from them runs last."""
    selected = set(models)
    out = [[m for m in level if m in selected] for level in levels]
    placed = {m for level in out for m in level}
    rest = [m for m in models if m not in placed]
    return [level for level in out if level] + ([rest] if rest else [])


def _run(ctx: RunContext, models: list[str], levels: list[list[str]], upstream: Mapping[str, AbstractSet[str]],
         full_refresh: frozenset[str], blocked: dict[str, str], gates: frozenset[str] | None,
         on_start: Callable[[str], None] | None = None) -> Iterator[ModelResult]:
    """Start each model as soon as its selected upstream models have finished (not when their whole
    level has): a long model holds back only its own downstream. Order among ready models follows
    ``levels``. The result of a model in ``gates`` (None: every model) is yielded before any model
    that depends on it starts, so a :meth:`ModelRun.block` for it (model -> why its downstream is
    skipped) applies to them; other models' dependents start first."""
    selected = set(models)
    order = [name for level in levels for name in level]
    ups = {name: upstream.get(name, frozenset()) & selected for name in order}
    finished: set[str] = set()
    waiting = list(order)
    # leaving: the models' pool first, then the background work (a quarantine query a failed model never waited for)
    with ctx.background, ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL, len(order))),
                                            thread_name_prefix="streamt") as pool:
        running: dict[Future[ModelResult], str] = {}

        def start_ready() -> Iterator[ModelResult]:
            while True:
                ready = [n for n in waiting if ups[n] <= finished]
                if not ready:
                    return
                for name in ready:
                    waiting.remove(name)
                    cause = _skip_cause(ctx.project, name, ups[name], blocked)
                    if cause:
                        blocked[name] = cause
                        finished.add(name)  # its downstream is ready (to be skipped) at the next pass
                        yield skipped(name, _materialized(ctx.project, name), f"skipped: {cause}")
                        continue
                    if on_start is not None:
                        on_start(name)
                    running[pool.submit(run_one, ctx, name, name in full_refresh)] = name

        while waiting or running:
            yield from start_ready()
            if not running:
                if waiting:  # only a dependency cycle, which the graph rejects earlier
                    raise RuntimeError(f"models {', '.join(waiting)} wait for each other")
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: order.index(running[f])):
                name = running.pop(future)
                result = future.result()
                if not result.ok:
                    blocked[name] = f"upstream model {name} failed"
                early = result.ok and gates is not None and name not in gates
                if early:  # nothing the consumer does with it can stop its downstream: start them now
                    finished.add(name)
                    yield from start_ready()
                yield result
                finished.add(name)


def _materialized(project: Project, name: str) -> str:
    model = project.models.get(name)
    return model.materialized or "table" if model else "unknown"


def _skip_cause(project: Project, name: str, ups: AbstractSet[str], blocked: Mapping[str, str]) -> str | None:
    """Why ``name`` cannot run: disabled, or the root cause that blocked one of its upstream models."""
    model = project.models.get(name)
    if model is not None and not model.enabled:
        return f"model {name} is disabled (enabled: false)"
    if name in blocked:  # blocked before the run started
        return blocked[name]
    for up in sorted(ups):
        if up in blocked:
            return blocked[up]
    return None


# Infrastructure hiccups that say nothing about the model: retried. Spark starts the Python worker of a
# Spark Connect server's foreachBatch as a new process and gives it a fixed 10 s to import pyspark and
# connect back (PythonWorkerFactory.createSimpleWorker; no setting changes it); a server whose cores are
# busy misses that. The error has no error condition, so its message is what identifies it. A busy
# spell outlasts an immediate retry (seen in CI), so each retry waits longer first.
TRANSIENT = ("Python worker failed to connect back",)
RETRY_WAITS_S = (5.0, 20.0)


def run_one(ctx: RunContext, name: str, full_refresh: bool = False) -> ModelResult:
    """Run one model; any error becomes a failed result with one clear line (never raises)."""
    result = _run_one(ctx, name, full_refresh)
    for pause in RETRY_WAITS_S:
        if result.ok or not result.error or not any(t in result.error for t in TRANSIENT):
            break
        log.warning("model %s: transient Spark error, retrying in %.0f s: %s", name, pause, result.error)
        time.sleep(pause)
        result = _run_one(ctx, name, full_refresh)  # the retry is the same run: a full refresh stays one
    return result


def _run_one(ctx: RunContext, name: str, full_refresh: bool = False) -> ModelResult:
    start = time.monotonic()
    model = ctx.project.models.get(name)
    if model is None:
        return failed(name, "unknown", f"model {name} is not defined in the project")
    kind = model.materialized or "table"
    materialize = MATERIALIZERS.get(kind)
    if materialize is None:
        return failed(name, kind, f"model {name}: unknown materialization {kind!r}")
    try:
        with ctx.scheduler_pool(name, f"streamt {kind} {name}"), live.running(name, kind):
            mctx = ctx.for_model(model)
            digest = _input_digest(ctx, name)  # before the model reads anything
            result = materialize(mctx, model, full_refresh)
            if result.ok and (broken := contract_violation(ctx.project, name, result.schema)):
                return failed(name, kind, broken, time.monotonic() - start)
            if result.ok and (topic := model_topic(ctx.project, model)) is not None:
                result = replace(result, topic=topic, topic_rows=publish_topic(mctx, model))
            if result.ok and digest is not None:
                _keep_record(ctx, result, digest)
    except Exception as exc:
        log.debug("model %s failed", name, exc_info=True)
        return failed(name, kind, model_error(name, exc, ctx.warehouse.data_dir(name)), time.monotonic() - start)
    return replace(result, duration_s=time.monotonic() - start)


def _input_digest(ctx: RunContext, name: str) -> str | None:
    """What the model is about to read (the run's own listings and versions), when Python can follow it."""
    if ctx.up_to_date is None or ctx.partition is not None:
        return None
    project = ctx.project
    listed = up_to_date.python_listing(project)

    def listing(source: str) -> Snapshot | None:  # the run's own snapshot, the files the model reads
        return source_snapshot(ctx, project.sources[source]) if listed(source) is not None else None

    def version(model: str) -> Commit | None:  # the version the run pinned, else now (never pinned here:
        # a model a test only compares with is read at its own version by the models downstream of it)
        return model_version(ctx, model) if ctx.per_run.known(("model-version", model)) else \
            current_commit(ctx.warehouse.data_dir(model))

    offsets: dict[str, str | None] = ctx.per_run.get(("kafka-offsets",), dict)
    state = up_to_date.InputState(project, ctx.up_to_date, listing, version, offsets)
    try:
        return state.digest(name)
    except Exception:  # the record is an optimisation: never a reason for a model to fail
        log.debug("model %s: no up-to-date digest", name, exc_info=True)
        return None


def _keep_record(ctx: RunContext, result: ModelResult, digest: str) -> None:
    """Record what the model read and left; not when its table is at another version than this run
    left (a concurrent writer: the next run decides on Spark). A state that cannot be read (an object
    store that does not answer) leaves no record: the next run goes to Spark."""
    try:
        own = up_to_date.own_state(ctx.project, ctx.paths, ctx.warehouse, result.model)
    except Exception:  # the record is an optimisation: never a reason for a model to fail
        log.debug("model %s: its state was not recorded", result.model, exc_info=True)
        return
    if own is None or (result.delta_version is not None and not str(own.get("table")).endswith(
            f"@{result.delta_version}")):
        return
    up_to_date.write_record(ctx.paths, result.model, digest, own, ctx.run_id)
