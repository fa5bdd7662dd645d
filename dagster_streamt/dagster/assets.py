"""The models multi-asset: the selected models run in one Spark session, level by level, and each
yields its materialization as soon as it finishes. A failed model skips its downstream; the run
fails at the end when any model failed.

No `from __future__ import annotations` here: Dagster reads the runtime type hints of ops.
"""

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import dagster as dg
from dagster import AssetExecutionContext

from ..api import LoadedProject
from ..checks.results import blocks_downstream, standing_only
from ..core import metadata as meta
from ..core.results import ModelResult
from ..spec.models import PartitionedBy
from .checks import check_result, check_spec, report_check, tests_by_target
from .key_map import KeyMap
from .partitions import backfill_policy, partitions_def, scope_of
from .progress import StepTimes, emit, report_times
from .resources import RunOptions, SparkResource
from .result_metadata import partition_metadata, result_metadata, timing, written_line
from .source_tests import run_source_tests, standing_verdicts
from .source_updates import source_states, sources_read, update_events
from .test_alerts import send_test_alerts
from .unchanged import definitions, unchanged_results

if TYPE_CHECKING:
    from ..spark.runner import ModelRun


# Dagster lists the run's whole range at each call: beyond this many partitions (a year of hours) their
# own entries are left out (the run's totals, named run_*, still say what it did)
MAX_PARTITION_METADATA = 1000


def build_models_asset(loaded: LoadedProject, specs: dict[str, dg.AssetSpec],
                       keys: KeyMap, *, name: str | None = None,
                       partitioning: PartitionedBy | None = None) -> dg.AssetsDefinition:
    """One subsettable multi-asset over ``specs``; models partitioned alike get their own
    (``partitioning``), because a Dagster multi-asset has one partitions definition."""
    graph = loaded.graph
    pdef = partitions_def(partitioning) if partitioning is not None else None
    policy = backfill_policy(partitioning) if partitioning is not None else None
    name_of = {spec.key: name for name, spec in specs.items()}
    model_tests = {name: tests for (kind, name), tests in tests_by_target(loaded, keys).items()
                   if kind == "model" and name in specs}
    check_specs = [check_spec(loaded, keys, test) for tests in model_tests.values() for test in tests]

    @dg.multi_asset(name=name or f"{loaded.project.ident}_models", specs=list(specs.values()),
                    check_specs=check_specs, can_subset=True, partitions_def=pdef, backfill_policy=policy)
    def models(context: AssetExecutionContext, spark: SparkResource, run_options: RunOptions) -> Iterator[Any]:
        selected_checks = set(context.selected_asset_check_keys)
        selected = sorted(name_of[k] for k in context.selected_asset_keys if k in name_of)

        def checks_of(model: str) -> list[Any]:
            return [t for t in model_tests.get(model, []) if keys.tests[t.name] in selected_checks]

        def run_checks(session: Any, model: str, result: ModelResult | None = None,
                       run: "ModelRun | None" = None) -> Iterator[dg.AssetCheckResult]:
            from ..checks.execute import execute_test

            for test in checks_of(model):
                began = time.monotonic()
                outcome = execute_test(session, loaded.project, test, run_id=context.run.run_id, progress=result)
                times.tests += time.monotonic() - began
                check = check_result(keys, test, outcome)
                report_check(test, outcome)
                if not outcome.passed and standing_only(outcome):  # red until a full refresh; alerted already
                    context.log.warning(f"streamt: test {test.name} on {model}: no new violation; rows found bad "
                                        "by earlier runs are still in the table")
                elif not outcome.passed:
                    send_test_alerts(test, model, outcome, context.log)
                    level = "error" if outcome.severity == "error" else "warning"
                    getattr(context.log, level)(f"streamt: test {test.name} on {model} failed "
                                                f"({sum(a.failing_rows for a in outcome.assertions)} failing rows)")
                    if run is not None and blocks_downstream(test, loaded.project.defaults.tests.severity):
                        run.block(model, f"blocking test {test.name} on {model} failed")
                yield check

        recorded: dict[str, Any] = {}  # the project's facets, computed once a step needs them

        def describe(result: ModelResult) -> dict[str, Any]:
            """A model's materialization metadata: what the run did, and the definition it ran."""
            from ..changes.facets import facets_of
            from ..changes.record import definition_record

            if "facets" not in recorded:
                recorded["facets"] = facets_of(loaded)
            definition = definition_record(recorded["facets"], result.model)
            return {**result_metadata(result), meta.DEFINITION: dg.MetadataValue.json(definition)}

        def run_step(refresh: frozenset[str]) -> Iterator[Any]:
            todo = selected
            # the sources these models read, as they are before any reads them: new data is reported on them
            states = source_states(loaded, sources_read(loaded, todo))
            for event in update_events(loaded, keys, context.instance, states, f"run {context.run.run_id[:8]}"):
                context.log_event(event)
            verdicts = standing_verdicts(context, loaded, keys, states)  # the rest run once Spark is up
            if todo and partitioning is None:  # what needs no Spark is reported first, without a session
                unchanged = yield from unchanged_results(context, loaded, keys, todo, refresh, checks_of,
                                                           describe, spark.engine_key())
                times.without_spark = len(unchanged)
                todo = [m for m in todo if m not in unchanged]
                if not todo:
                    return
            from ..spark.new_data import choose_jit
            from ..spark.runner import run_models  # the Spark layer is imported once a model needs it

            began = time.monotonic()
            jit = choose_jit(loaded.project, loaded.compiled, todo, refresh) if todo else None
            with spark.session(loaded.project, jit=jit) as session:
                times.session = time.monotonic() - began
                if not todo:  # check-only execution: test what is stored now
                    for model in sorted({name_of[k.asset_key] for k in context.selected_asset_check_keys}):
                        yield from run_checks(session, model)
                    return
                plan = graph.run_plan(todo)
                failed: list[str] = []
                scope = scope_of(context, partitioning) if partitioning is not None else None
                if scope is not None:
                    context.log.info(f"streamt: partitions {scope.label()}")
                severity = loaded.project.defaults.tests.severity
                gates = {m for m in todo if any(blocks_downstream(t, severity) for t in checks_of(m))}
                before = run_source_tests(context, session, loaded, keys, verdicts)
                times.tests += before
                stopped = verdicts.stopped
                began = time.monotonic()
                run = run_models(session, loaded.project, plan.order, plan.levels, plan.upstream,
                                 full_refresh=refresh, partition=scope, gates=gates,
                                 definitions=definitions(loaded, spark.engine_key()),
                                 blocked={m: stopped[s] for m in todo for s in sources_read(loaded, [m])
                                          if s in stopped},
                                 on_start=lambda name: context.log.info(f"streamt: {name} started"))
                for result in run:
                    name = result.model
                    ended = time.time()
                    times_md = timing(ended - float(result.duration_s or 0.0), ended)
                    emit(result)
                    times.per_model[name] = float(result.duration_s or 0.0)
                    if result.status == "success":
                        context.log.info(f"streamt: {written_line(result)}")
                        if result.rows_outside_partitions:
                            context.log.warning(f"streamt: {name}: {result.rows_outside_partitions} output row(s) "
                                                "belong to no partition of this run and were not written")
                        for key in (result.partitions or [])[:MAX_PARTITION_METADATA]:  # each one's rows, window
                            context.add_asset_metadata(partition_metadata(result, key, pdef),
                                                       asset_key=specs[name].key, partition_key=key)
                        yield dg.MaterializeResult(asset_key=specs[name].key,
                                                   metadata={**describe(result), **times_md})
                        yield from run_checks(session, name, result, run)  # before any downstream model starts
                        continue
                    if result.status == "skipped":
                        context.log.warning(f"streamt: {name} skipped: {result.error}")
                    else:
                        failed.append(name)
                        context.log.error(f"streamt: {name} failed: {result.error}")
                    # recorded in the event log: the UI shows why, and lineage events are rebuilt from it
                    yield dg.AssetObservation(asset_key=specs[name].key, metadata={
                        meta.STATUS: result.status, "error": str(result.error or ""), **times_md})
                times.models = time.monotonic() - began - (times.tests - before)  # the models' tests left out
                times.quarantine = run.timings
            if failed or stopped:
                why = [f"{len(failed)} model(s) failed: {', '.join(failed)}"] if failed else []
                raise dg.Failure(description="; ".join(why + [stopped[s] for s in sorted(stopped)]),
                                 metadata={"failed_models": ", ".join(failed)})

        refresh = run_options.models(loaded.project)  # a typo fails here, before Spark starts
        times = StepTimes(context.op_def.name)
        try:
            yield from run_step(refresh)
        finally:
            report_times(context, times)

    return models
