"""Data tests: assertion parameters, definition-time validation, Spark SQL and runners.

Knows nothing of Dagster. The parsing, validation and SQL-building modules import no Spark, so
``streamt validate`` stays fast; the runners (``run_test``, ``run_schema_test``, continuous helpers)
import pyspark on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .assertions import ALIASES, ASSERTIONS, CONTINUOUS_ONLY, AssertionIssue, ParsedAssertion, parse_assertions
from .codes import TEST_CODES
from .evaluate import check_max_lag, check_throughput
from .results import AssertionResult, TestResult, severity_of
from .sql import AssertionSql, TestSql, build_test_sql

_LAZY = {
    "run_test": "runner", "run_schema_test": "runner", "StreamProgress": "runner",
    "violations_frame": "continuous", "evaluate_batch": "continuous", "VIOLATIONS_SCHEMA": "continuous",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(name)


__all__ = [
    "ALIASES", "ASSERTIONS", "CONTINUOUS_ONLY", "TEST_CODES", "VIOLATIONS_SCHEMA", "AssertionIssue",
    "AssertionResult", "AssertionSql", "ParsedAssertion", "StreamProgress", "TestResult", "TestSql",
    "build_test_sql", "check_max_lag", "check_throughput", "evaluate_batch", "parse_assertions",
    "run_schema_test", "run_test", "severity_of", "violations_frame",
]
