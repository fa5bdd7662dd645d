"""Run one project test against what is stored now: registers the target (and any relationships
target) as views, then dispatches by test type. Shared by Dagster asset checks and ``streamt test``.
Never raises: a test that cannot run is a failed result with the reason."""

from __future__ import annotations

from time import perf_counter
from typing import TYPE_CHECKING

from ..core.results import ModelResult
from ..spec.models import Test
from ..spec.project import Project
from .kinds import StreamProgress
from .results import TestResult, severity_of, target_of
from .runner import run_schema_test, run_test

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def execute_test(spark: SparkSession, project: Project, test: Test, *, run_id: str | None = None,
                 progress: ModelResult | None = None, quarantine: bool = True) -> TestResult:
    """``progress`` is the target stream model's ModelResult of this run (for throughput/max_lag);
    ``quarantine=False``: a source read leaves its malformed records to the models that read it next."""
    from ..spark import describe_exception, register_model_view, register_source_view

    started = perf_counter()
    default = project.defaults.tests.severity

    def resolve(kind: str, name: str) -> str:
        view = register_model_view(spark, project, name) if kind == "model" else \
            register_source_view(spark, project, name, quarantine)
        return f"`{view}`"

    kind, name = target_of(test)
    try:
        relation = resolve(kind, name)
        if test.type == "schema":
            return run_schema_test(spark.table(relation), test, resolve=resolve, default_severity=default,
                                   variables=project.vars)
        if test.type == "continuous":
            from .violations import run_continuous_tests

            results = run_continuous_tests(spark, project, name, [test], run_id or "adhoc", progress=progress)
            return results[test.name]
        stream = None
        if progress is not None and progress.processed_rows_per_second is not None:
            stream = StreamProgress(rows_per_second=progress.processed_rows_per_second)
        return run_test(spark, test, relation, resolve=resolve, default_severity=default, variables=project.vars,
                        progress=stream)
    except Exception as exc:  # the target is not materialized yet, Spark refused the SQL...
        return TestResult(test.name, f"{kind}.{name}", severity_of(test, default), False, (), perf_counter() - started,
                          error=f"test {test.name}: {describe_exception(exc)}")
