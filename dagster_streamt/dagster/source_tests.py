"""Tests on sources: asset checks on the source's external asset, run by hand (``<project>_source_tests``)
and by the first run of the models that read the source after its data changed.

A source is never materialized, so Dagster never runs its checks with a run of its own; left to
"Execute" in the UI, they stay unevaluated while models read new data. So a run of the models that
read a source runs the source's tests first, in that run's Spark session, unless their last result was
about the same data (each result records what it judged: the source's state, see
:mod:`.source_updates`, and the test's definition); a source whose state only Spark can tell is tested
at every such run. Results are logged as the checks' evaluations; a failed blocking test skips the
models that read the source (dbt's ``build`` does the same), and a result that stands (same data, failed)
blocks them again.

No `from __future__ import annotations`: Dagster reads the runtime type hints of check functions.
"""

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
from dagster import AssetCheckExecutionContext

from .. import __version__
from ..api import LoadedProject
from ..checks.assertions import decided_by_data, relations_read
from ..checks.results import blocks_downstream
from ..spec.models import Test
from .checks import check_result, check_spec, last_evaluation, report_check, tests_by_target
from .key_map import KeyMap
from .progress import CheckEvent, emit
from .resources import SparkResource
from .source_updates import SourceData, source_data
from .test_alerts import send_test_alerts

JUDGED = "streamt/judged"  # what a source test's result is about: its source's state and its own definition


def judged(test: Test, data: SourceData | None) -> str | None:
    """The mark of ``test`` on the source data ``data``; None when its verdict may change while the data
    does not (the state is unknown, it reads other relations, or it depends on the clock)."""
    if data is None or relations_read(test) != set() or not decided_by_data(test):
        return None
    text = json.dumps([data.version, test.model_dump(mode="json"), __version__], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def source_tests_of(loaded: LoadedProject, keys: KeyMap, source: str) -> list[Test]:
    return tests_by_target(loaded, keys).get(("source", source), [])


def _evaluation(result: dg.AssetCheckResult) -> dg.AssetCheckEvaluation:
    """A check result logged from another asset's step (a check on a source is no output of a model's)."""
    assert result.asset_key is not None and result.check_name is not None
    return dg.AssetCheckEvaluation(asset_key=result.asset_key, check_name=result.check_name, passed=result.passed,
                                   metadata=dict(result.metadata), severity=result.severity,
                                   description=result.description)


@dataclass
class SourceVerdicts:
    """A run's source tests before its models: those to run (source, test, mark), and the sources a
    blocking test stops (source -> why)."""

    pending: list[tuple[str, Test, str | None]] = field(default_factory=list)
    stopped: dict[str, str] = field(default_factory=dict)


def standing_verdicts(context: dg.AssetExecutionContext, loaded: LoadedProject, keys: KeyMap,
                      data: Mapping[str, SourceData | None]) -> SourceVerdicts:
    """For the tests of the sources in ``data`` (name -> its state now): the last result of each that
    judged that very state stands (reported to the run's listener, blocking again if it failed); the
    others are pending, for the run's Spark session (:func:`run_source_tests`)."""
    severity = loaded.project.defaults.tests.severity
    out = SourceVerdicts()
    for name in sorted(data):
        for test in source_tests_of(loaded, keys, name):
            mark = judged(test, data[name])
            last = last_evaluation(context.instance, keys.tests[test.name])
            stored = last[1].metadata.get(JUDGED) if last is not None else None
            if last is None or mark is None or getattr(stored, "value", stored) != mark:
                out.pending.append((name, test, mark))
                continue
            evaluation = last[1]
            failing = evaluation.metadata.get("failing_rows")
            emit(CheckEvent(test.name, f"source.{name}", evaluation.passed, evaluation.severity.value.lower(),
                            int(getattr(failing, "value", failing) or 0), 0.0,
                            "last result stands (the source has not changed)"))
            context.log.info(f"streamt: test {test.name} on source {name}: its last result stands "
                             f"({'passed' if evaluation.passed else 'failed'}; the source has not changed since)")
            if not evaluation.passed and blocks_downstream(test, severity):
                out.stopped.setdefault(name, f"blocking test {test.name} on source {name} failed")
    return out


def run_source_tests(context: dg.AssetExecutionContext, session: Any, loaded: LoadedProject, keys: KeyMap,
                     verdicts: SourceVerdicts) -> float:
    """Run the pending tests in ``session``, logging each result as its check's evaluation and adding the
    sources a failed blocking one stops to ``verdicts.stopped``; return the seconds spent."""
    from ..checks.execute import execute_test

    severity = loaded.project.defaults.tests.severity
    began = time.monotonic()
    for name, test, mark in verdicts.pending:
        # the models quarantine (and count) the source's malformed records when they read it
        outcome = execute_test(session, loaded.project, test, run_id=context.run.run_id, quarantine=False)
        report_check(test, outcome)
        send_test_alerts(test, f"source {name}", outcome, context.log)
        context.log_event(_evaluation(check_result(keys, test, outcome, {JUDGED: mark} if mark else None)))
        if outcome.passed:
            continue
        level = "error" if outcome.severity == "error" else "warning"
        getattr(context.log, level)(f"streamt: test {test.name} on source {name} failed "
                                    f"({sum(a.failing_rows for a in outcome.assertions)} failing rows)")
        if blocks_downstream(test, severity):
            verdicts.stopped.setdefault(name, f"blocking test {test.name} on source {name} failed")
    verdicts.pending = []
    return time.monotonic() - began


def build_source_checks(loaded: LoadedProject, keys: KeyMap,
                        sources: set[str] | None = None) -> dg.AssetChecksDefinition | None:
    """Tests on sources (``sources``; default all), to run by hand: a batch read of the source
    (malformed rows are quarantined, not tested)."""
    tests = [test for (kind, name), ts in tests_by_target(loaded, keys).items()
             if kind == "source" and (sources is None or name in sources) for test in ts]
    if not tests:
        return None
    specs = [check_spec(loaded, keys, test) for test in tests]
    by_key = {keys.tests[test.name]: test for test in tests}

    @dg.multi_asset_check(specs=specs, name=f"{loaded.project.ident}_source_tests", can_subset=True)
    def source_tests(context: AssetCheckExecutionContext, spark: SparkResource):  # type: ignore[no-untyped-def]
        from ..checks.execute import execute_test

        with spark.session(loaded.project) as session:
            for key in sorted(context.selected_asset_check_keys, key=lambda k: k.name):
                test = by_key[key]
                data = source_data(loaded, str(test.source))  # taken before the read: never newer than it
                outcome = execute_test(session, loaded.project, test, run_id=context.run.run_id)
                report_check(test, outcome)
                send_test_alerts(test, f"source {test.source}", outcome, context.log)
                mark = judged(test, data)
                yield check_result(keys, test, outcome, {JUDGED: mark} if mark else None)

    return source_tests
