"""Project tests as Dagster asset checks: one check per test (named after it, on its model or
source), because users name and own tests, and a test's assertions read best together; each
assertion is a row of the check's metadata. ``severity: error`` checks block downstream models.

No `from __future__ import annotations`: Dagster reads the runtime type hints of check functions.
"""

import json
from typing import Any

import dagster as dg

from ..api import LoadedProject
from ..checks.assertions import parse_assertions
from ..checks.results import TestResult, blocks_downstream, severity_of, target_of
from ..checks.sql import describe
from ..core import metadata as meta
from ..spec.models import Test
from .key_map import KeyMap
from .progress import CheckEvent, emit


def describe_test(test: Test) -> str:
    parsed, _ = parse_assertions(test)
    lines = [test.description.strip()] if test.description else []
    lines.append(f"{test.type} test, severity {severity_of(test)}:")
    lines += [f"- {describe(a)}" for a in parsed]
    if test.type == "continuous":
        lines.append("Each run judges the rows the model added since the test's last run; rows found bad "
                     "earlier keep it failing until a full refresh rebuilds the model.")
    return "\n".join(lines)


def tests_by_target(loaded: LoadedProject, keys: KeyMap) -> dict[tuple[str, str], list[Test]]:
    """Enabled tests (those with a check key) by target."""
    out: dict[tuple[str, str], list[Test]] = {}
    for name, test in sorted(loaded.project.tests.items()):
        if name in keys.tests:
            out.setdefault(target_of(test), []).append(test)
    return out


def check_spec(loaded: LoadedProject, keys: KeyMap, test: Test) -> dg.AssetCheckSpec:
    key = keys.tests[test.name]
    return dg.AssetCheckSpec(name=key.name, asset=key.asset_key, description=describe_test(test),
                             blocking=blocks_downstream(test, loaded.project.defaults.tests.severity),
                             metadata={"test_type": test.type})


def report_check(test: Test, outcome: TestResult) -> None:
    """Tell an in-process listener (``streamt run``/``test``) what the check found."""
    emit(CheckEvent(test.name, outcome.target, outcome.passed, outcome.severity,
                    sum(a.failing_rows for a in outcome.assertions), outcome.duration_seconds,
                    outcome.error or "; ".join(a.message or a.label for a in outcome.failed), outcome))


def last_evaluation(instance: dg.DagsterInstance, key: dg.AssetCheckKey,
                    skip_run: str | None = None) -> tuple[float, Any] | None:
    """(when, evaluation) of the check's last result, not counting run ``skip_run`` (a run that has
    planned the check already)."""
    for record in instance.event_log_storage.get_asset_check_execution_history(key, limit=5):
        event = record.event
        data = event.dagster_event.event_specific_data if event is not None and event.dagster_event else None
        if record.run_id != skip_run and event is not None and hasattr(data, "passed"):
            return event.timestamp, data
    return None


def check_result(keys: KeyMap, test: Test, result: TestResult,
                 extra: dict[str, Any] | None = None) -> dg.AssetCheckResult:
    """The check's result; ``extra``: more metadata (what data a source test judged)."""
    failing = sum(a.failing_rows for a in result.assertions)
    md: dict[str, Any] = {
        "failing_rows": failing,
        "total_rows": result.total_rows,
        "duration_s": round(result.duration_seconds, 3),
        "assertions": dg.MetadataValue.md(_assertions_table(result)),
    }
    if test.type == "continuous":  # what this verdict looked at: new rows, plus what earlier runs found
        standing = sum(int(a.observed.get("standing_violations") or 0) for a in result.assertions)
        md["checked"] = (f"{result.total_rows} row(s) added since the last run"
                         + (f"; {standing} violation(s) from earlier runs still in the table" if standing else ""))
    if result.sql:
        md["sql"] = dg.MetadataValue.md(f"```sql\n{result.sql}\n```")
    samples = [{"assertion": a.label, **row} for a in result.failed for row in a.sample]
    if samples:
        md["failing_rows_sample"] = dg.MetadataValue.json(json.loads(json.dumps(samples[:20], default=str)))
    if result.error:
        md["error"] = result.error
    md[meta.RESULT] = dg.MetadataValue.json(result.compact())  # for OpenLineage assertions
    md.update(extra or {})
    key = keys.tests[test.name]
    return dg.AssetCheckResult(
        asset_key=key.asset_key, check_name=key.name, passed=result.passed,
        severity=dg.AssetCheckSeverity.ERROR if result.severity == "error" else dg.AssetCheckSeverity.WARN,
        metadata=md, description=result.error or None,
    )


def _assertions_table(result: TestResult) -> str:
    rows = ["| assertion | result | failing rows | detail |", "|---|---|---|---|"]
    for a in result.assertions:
        detail = (a.error or a.message or a.description).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {a.label} | {'pass' if a.passed else 'FAIL'} | {a.failing_rows} | {detail[:200]} |")
    if result.error:
        rows.append(f"| (test) | FAIL | - | {result.error.replace('|', '/')[:200]} |")
    return "\n".join(rows)
