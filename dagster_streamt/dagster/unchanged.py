"""Models a run leaves as they are, reported without starting Spark (see
:mod:`dagster_streamt.spark.run.up_to_date`): each gets a materialization with its stored metadata
(``refresh: unchanged``), and each of its selected data tests its last result again, marked as
standing, because the data it judged is the data there now.

A model is reported this way only when that last result is worth repeating: every selected test was
evaluated since the model's last successful run, no blocking test failed (Spark reruns it, so its
downstream is skipped as before), and no test depends on the clock (``freshness``: evaluated now, on
Spark). Its upstream models in the run must qualify too.

No `from __future__ import annotations`: the module is imported by the assets module, whose hints
Dagster reads at runtime.
"""

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import dagster as dg

from ..api import LoadedProject
from ..checks.results import blocks_downstream
from ..core import metadata as meta
from ..core.results import ModelResult
from ..spec.models import Test
from .key_map import KeyMap
from .progress import CheckEvent, emit

if TYPE_CHECKING:
    from ..spark.up_to_date import Definitions

CLOCK_ASSERTIONS = frozenset({"freshness"})  # their verdict changes with time, not with the data
RUN_ONLY = ("batches", "input_rows_per_second", "processed_rows_per_second", "executed_sql")  # of the run that ran


def unchanged_results(context: dg.AssetExecutionContext, loaded: LoadedProject, keys: KeyMap,
                      selected: Sequence[str], refresh: frozenset[str],
                      checks_of: Callable[[str], list[Test]],
                      describe: Callable[[ModelResult], dict[str, Any]],
                      engine: str) -> Generator[Any, None, list[str]]:
    """Yield the events of every model of ``selected`` that needs no Spark; return their names.
    ``describe``: a model result as materialization metadata; ``engine``: as :func:`definitions` takes it."""
    from ..spark.up_to_date import Record, unchanged_models

    order = [n for n in loaded.graph.run_plan(selected).order if n in selected]
    instance = context.instance
    severity = loaded.project.defaults.tests.severity
    stood: dict[str, list[tuple[Test, Any]]] = {}

    def standing(name: str, record: Record) -> bool:
        results = []
        for test in checks_of(name):
            if any(set(a) & CLOCK_ASSERTIONS for a in test.assertions):
                return False
            found = _last_evaluation(instance, keys.tests[test.name], context.run.run_id)
            if found is None or found[0] < record.at:
                return False
            evaluation = found[1]
            if not evaluation.passed and blocks_downstream(test, severity):
                return False
            results.append((test, evaluation))
        stood[name] = results
        return True

    fresh = unchanged_models(loaded.project, definitions(loaded, engine), order, refresh, standing)
    for name, record in fresh.items():
        result = _result(loaded, name, record)
        emit(result)
        context.log.info(f"streamt: {name} unchanged: {result.refresh_note}")
        yield dg.MaterializeResult(asset_key=keys.model(name), metadata=_metadata(instance, keys, result, describe))
        for test, evaluation in stood[name]:
            yield _stood_check(context, keys, test, evaluation, name)
    return list(fresh)


def definitions(loaded: LoadedProject, engine: str) -> "Definitions":
    """What the up-to-date digests need of ``loaded`` (:class:`~dagster_streamt.spark.up_to_date.Definitions`);
    ``engine``: the Spark resource's :meth:`~dagster_streamt.dagster.resources.SparkResource.engine_key`."""
    from ..checks.assertions import relations_read
    from ..checks.results import target_of
    from ..spark.up_to_date import Definitions

    tests: dict[str, list[Test]] = {}
    for _, test in sorted(loaded.project.tests.items()):
        kind, name = target_of(test)
        if kind == "model":
            tests.setdefault(name, []).append(test)
    return Definitions(loaded.compiled, tests, relations_read, engine)


def _last_evaluation(instance: dg.DagsterInstance, key: dg.AssetCheckKey, run_id: str) -> tuple[float, Any] | None:
    """(when, evaluation) of the check's last result from another run (this run has planned it already)."""
    for record in instance.event_log_storage.get_asset_check_execution_history(key, limit=5):
        event = record.event
        data = event.dagster_event.event_specific_data if event is not None and event.dagster_event else None
        if record.run_id != run_id and event is not None and hasattr(data, "passed"):
            return event.timestamp, data
    return None


def _result(loaded: LoadedProject, name: str, record: Any) -> ModelResult:
    """The model as its Delta log describes it now (the same version its last run left)."""
    from ..spark.delta.delta_table import current_commit
    from ..spark.run.output import schema_pairs
    from ..spark.storage.paths import ProjectPaths
    from ..spark.storage.warehouse import Warehouse

    model = loaded.project.models[name]
    kind = model.materialized or "table"
    note = f"no input changed since run {record.run_id} (decided without starting Spark)"
    result = ModelResult(model=name, materialized=kind, status="success", refresh="unchanged", refresh_note=note,
                         rows_written=None if kind == "view" else 0, input_rows=0)
    if kind in ("table", "stream"):
        paths = ProjectPaths.from_project(loaded.project)
        location = Warehouse(paths.warehouse, paths.locks).data_dir(name)
        commit = current_commit(location)
        if commit is not None:
            schema = commit.schema()
            return replace(result, table_rows=commit.rows, delta_version=commit.version, location=str(location),
                           schema=schema_pairs(schema) if schema is not None else [])
    return result


def _metadata(instance: dg.DagsterInstance, keys: KeyMap, result: ModelResult,
              describe: Callable[[ModelResult], dict[str, Any]]) -> dict[str, Any]:
    """The model's last materialization metadata, with what this run did (nothing) and its times."""
    last = instance.get_latest_materialization_event(keys.model(result.model))
    stored = dict(last.asset_materialization.metadata) if last is not None and last.asset_materialization else {}
    now = round(time.time(), 3)
    kept = {k: v for k, v in stored.items() if k not in RUN_ONLY}
    return {**kept, **describe(result), meta.STARTED_AT: now, meta.ENDED_AT: now}


def _stood_check(context: dg.AssetExecutionContext, keys: KeyMap, test: Test, evaluation: Any,
                 model: str) -> dg.AssetCheckResult:
    key = keys.tests[test.name]
    md = dict(evaluation.metadata)
    md["last_result"] = f"stands: {model} is unchanged since this test last ran"
    failing = md.get("failing_rows")
    failing_rows = int(getattr(failing, "value", failing) or 0)
    emit(CheckEvent(test.name, f"model.{model}", evaluation.passed, evaluation.severity.value.lower(),
                    failing_rows, 0.0, "last result stands (no input changed)"))
    if not evaluation.passed:
        context.log.warning(f"streamt: test {test.name} on {model}: its last result stands (failed, "
                            f"{failing_rows} failing rows)")
    return dg.AssetCheckResult(asset_key=key.asset_key, check_name=key.name, passed=evaluation.passed,
                               severity=evaluation.severity, metadata=md, description=evaluation.description)
