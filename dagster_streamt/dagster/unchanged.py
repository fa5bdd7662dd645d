"""Models a run leaves as they are, reported without starting Spark (see
:mod:`dagster_streamt.spark.up_to_date`): each gets a materialization with its stored metadata
(``refresh: unchanged``), and each of its selected data tests the result a Spark run would give: a
test that judges stored data its last result again, marked as standing (the data it judged is the
data there now); a continuous test, which judges only the rows committed since its last run, a pass
with nothing to judge when it last passed, else its last result again (the bad rows it found are still
there: see :func:`~dagster_streamt.checks.violations.run_continuous_tests`).

A model is reported this way only when every selected test's result is known so: each test was
evaluated since the model's last successful run, without an error, and did
not fail as a blocking test (Spark reruns it, so its downstream is skipped as before); no test
depends on the clock or on a run's progress (``freshness``, ``max_lag``, ``throughput``, SQL calling
``current_timestamp()``...: evaluated now, on Spark). Its upstream models in the run must qualify too.

No `from __future__ import annotations`: the module is imported by the assets module, whose hints
Dagster reads at runtime.
"""

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import dagster as dg

from ..api import LoadedProject
from ..checks.assertions import decided_by_data, nothing_to_judge, relations_read
from ..checks.results import blocks_downstream, model_tests
from ..core.results import ModelResult
from ..spec.models import Test
from .checks import check_result, last_evaluation, report_check
from .key_map import KeyMap
from .progress import CheckEvent, emit
from .result_metadata import timing

if TYPE_CHECKING:
    from ..spark.up_to_date import Definitions

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
    stood: dict[str, list[tuple[Test, Any]]] = {}  # model -> (test, its last evaluation or None: judged now)

    def standing(name: str, record: Record) -> bool:
        results: list[tuple[Test, Any]] = []
        for test in checks_of(name):
            continuous = test.type == "continuous"
            if not continuous and not decided_by_data(test):
                return False
            found = last_evaluation(instance, keys.tests[test.name], skip_run=context.run.run_id)
            if found is None or found[0] < record.at:
                return False
            evaluation = found[1]
            blocked = evaluation.severity == dg.AssetCheckSeverity.ERROR and blocks_downstream(test, severity)
            if "error" in evaluation.metadata or (not evaluation.passed and blocked):
                return False
            # a continuous test judges only new rows (none) but keeps failing while known bad rows remain
            results.append((test, None if continuous and evaluation.passed else evaluation))
        stood[name] = results
        return True

    fresh = unchanged_models(loaded.project, definitions(loaded, engine), order, refresh, standing)
    if fresh:  # one line for all (each event costs the run a database write); each one's note is in its metadata
        context.log.info(f"streamt: unchanged since their last run, decided without starting Spark: "
                         f"{', '.join(fresh)}")
    for name, record in fresh.items():
        result = _result(loaded, name, record)
        emit(result)
        yield dg.MaterializeResult(asset_key=keys.model(name), metadata=_metadata(instance, keys, result, describe))
        for test, evaluation in stood[name]:
            if evaluation is None:
                outcome = nothing_to_judge(test, f"model.{name}", severity,
                                           "no new rows since its last run: nothing to judge")
                report_check(test, outcome)
                yield check_result(keys, test, outcome)
            else:
                yield _stood_check(context, keys, test, evaluation, name)
    return list(fresh)


def definitions(loaded: LoadedProject, engine: str) -> "Definitions":
    """What the up-to-date digests need of ``loaded`` (:class:`~dagster_streamt.spark.up_to_date.Definitions`);
    ``engine``: the Spark resource's :meth:`~dagster_streamt.dagster.resources.SparkResource.engine_key`."""
    from ..spark.up_to_date import Definitions

    return Definitions(loaded.compiled, model_tests(loaded.project.tests), relations_read, engine)


def _result(loaded: LoadedProject, name: str, record: Any) -> ModelResult:
    """The model as its Delta log describes it now (the same version its last run left)."""
    from ..spark.delta.delta_table import current_commit
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
            return replace(result, table_rows=commit.rows, delta_version=commit.version, location=str(location),
                           schema=commit.columns())
    return result


def _metadata(instance: dg.DagsterInstance, keys: KeyMap, result: ModelResult,
              describe: Callable[[ModelResult], dict[str, Any]]) -> dict[str, Any]:
    """The model's last materialization metadata, with what this run did (nothing) and its times."""
    last = instance.get_latest_materialization_event(keys.model(result.model))
    stored = dict(last.asset_materialization.metadata) if last is not None and last.asset_materialization else {}
    now = time.time()
    kept = {k: v for k, v in stored.items() if k not in RUN_ONLY}
    return {**kept, **describe(result), **timing(now, now)}


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
