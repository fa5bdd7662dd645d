"""OpenLineage run events for Dagster runs of a project and the model runs inside them.

Run ids are deterministic (uuid5 over the Dagster run id and the node), so rebuilding the events of
a run after a crash, or a retried step, yields the same ids and a backend merges them instead of
showing ghost runs. Event times are always given by the caller: the model's real start and end,
never the time the events happen to be built or sent.

Shape: one parent run per Dagster run (job ``<project>.dagster_run``); each model run (job
``<project>.<model>``) and test run (job ``<project>.test.<test>``) carries a ``parent`` facet that
points to it, with the parent also recorded as root.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openlineage.client.event_v2 import InputDataset, Run, RunEvent, RunState
from openlineage.client.serde import Serde

from ..core.loaded import LoadedProject
from ..lineage.column_types import ProjectColumnLineage
from . import facets as F
from .datasets import ProjectDatasets
from .facets import PRODUCER, Assertion

if TYPE_CHECKING:  # the Spark package imports pyspark; events need only the result's fields
    from ..checks.results import TestResult
    from ..core.results import ModelResult

RUN_ID_NAMESPACE = uuid.UUID("6f0a4b3e-2c1d-5e8f-9a7b-0d1c2e3f4a5b")  # fixed forever: ids must stay stable
_TERMINAL = {"success": RunState.COMPLETE, "failed": RunState.FAIL, "skipped": RunState.ABORT}


def parent_run_id(dagster_run_id: str) -> str:
    """A Dagster run id is already a UUID: reuse it so lineage and Dagster runs share one id."""
    try:
        return str(uuid.UUID(dagster_run_id))
    except ValueError:
        return str(uuid.uuid5(RUN_ID_NAMESPACE, dagster_run_id))


def node_run_id(dagster_run_id: str, node: str) -> str:
    """uuid5 over (Dagster run id, node id such as ``model.orders_clean``)."""
    return str(uuid.uuid5(RUN_ID_NAMESPACE, f"{dagster_run_id}/{node}"))


@dataclass(frozen=True)
class DagsterRun:
    """The Dagster run a model ran in; ``partition_window`` (start, end) becomes ``nominalTime``."""

    run_id: str
    partition_window: tuple[datetime, datetime] | None = None


class EventBuilder:
    """Builds :class:`RunEvent` objects; :func:`to_dict` turns them into spec JSON.

    ``columns`` is the project's static column lineage (``column_lineage(loaded)``) or None to emit
    no ``columnLineage`` facet; it is the only place column lineage enters the events.
    """

    def __init__(self, loaded: LoadedProject, namespace: str | None = None, *,
                 columns: ProjectColumnLineage | None = None) -> None:
        self.datasets = ProjectDatasets(loaded, namespace, columns)
        self.project = loaded.project
        self.namespace = self.datasets.namespace

    @property
    def parent_job_name(self) -> str:
        return self.datasets.job_name("dagster_run")  # the name run_event gives the run's own job

    # -- the Dagster run -------------------------------------------------------------------------
    def run_event(self, run: DagsterRun, state: RunState, at: datetime, error: str | None = None) -> RunEvent:
        """START / COMPLETE / FAIL / ABORT of the Dagster run itself."""
        job = self.datasets.job("dagster_run", "BATCH", "JOB", self.project.info.description)
        facets = self._run_facets(run, state, error, child=False)
        return RunEvent(eventTime=F.iso(at), producer=PRODUCER, eventType=state, job=job,
                        run=Run(parent_run_id(run.run_id), facets=facets), inputs=[], outputs=[])

    def _run_facets(self, run: DagsterRun, state: RunState, error: str | None,
                    stack_trace: str | None = None, *, child: bool = True) -> dict[str, Any]:
        """Facets of a model or test run (a Spark run under the Dagster run), or of the Dagster run."""
        parent = F.parent(self.namespace, self.parent_job_name, parent_run_id(run.run_id)) if child else None
        failed = state in (RunState.FAIL, RunState.ABORT)
        return F.run_facets("spark" if child else "dagster", run.partition_window, error if failed else None,
                            stack_trace, parent)

    # -- model runs ------------------------------------------------------------------------------
    def model_run_id(self, run: DagsterRun, model: str) -> str:
        return node_run_id(run.run_id, f"model.{model}")

    def model_start(self, run: DagsterRun, model: str, at: datetime,
                    assertions: Sequence[Assertion] = ()) -> RunEvent:
        ds = self.datasets
        return RunEvent(eventTime=F.iso(at), producer=PRODUCER, eventType=RunState.START, job=ds.model_job(model),
                        run=Run(self.model_run_id(run, model), facets=self._run_facets(run, RunState.START, None)),
                        inputs=ds.inputs(model, assertions), outputs=ds.outputs(model))

    def model_end(self, run: DagsterRun, result: ModelResult, at: datetime, *,
                  assertions: Sequence[Assertion] = (), size_bytes: int | None = None,
                  stack_trace: str | None = None) -> RunEvent:
        """COMPLETE (success), FAIL (failed) or ABORT (skipped) with what the run observed: output
        schema, rows written, bytes written (given, or measured for a table's new version)."""
        state = _TERMINAL[result.status]
        ds = self.datasets
        if state is RunState.COMPLETE:
            size = size_bytes if size_bytes is not None else F.written_bytes(result.materialized, result.location)
            outputs = ds.outputs(result.model, result.schema, result.rows_written, size)
        else:
            outputs = ds.outputs(result.model)
        facets = self._run_facets(run, state, result.error or state.value.lower(), stack_trace)
        return RunEvent(eventTime=F.iso(at), producer=PRODUCER, eventType=state, job=ds.model_job(result.model),
                        run=Run(self.model_run_id(run, result.model), facets=facets),
                        inputs=ds.inputs(result.model, assertions), outputs=outputs)

    def model_events(self, run: DagsterRun, result: ModelResult, started_at: datetime, ended_at: datetime, *,
                     assertions: Sequence[Assertion] = (), size_bytes: int | None = None,
                     stack_trace: str | None = None) -> list[RunEvent]:
        """START and the terminal event of one model run. A skipped model gets START and ABORT at the
        same instant: the spec wants one START per run."""
        if result.status == "skipped":
            started_at = ended_at
        return [self.model_start(run, result.model, started_at, assertions),
                self.model_end(run, result, ended_at, assertions=assertions, size_bytes=size_bytes,
                               stack_trace=stack_trace)]

    # -- test runs -------------------------------------------------------------------------------
    def test_events(self, run: DagsterRun, test: str, found: Sequence[Assertion], started_at: datetime,
                    ended_at: datetime) -> list[RunEvent]:
        """A data test as a run reading its target with ``dataQualityAssertions``: checks on a model's
        own output run after the model, so they cannot ride on the model run's inputs."""
        spec = self.project.tests[test]
        target = f"model.{spec.model}" if spec.model else f"source.{spec.source}"
        relation = spec.model or spec.source or ""
        job = self.datasets.job(f"test.{test}", "BATCH", "TEST", spec.description, defined_by=("test", test))
        checks = [a for a in found if a.target == target]
        failed = any(not a.success and (a.severity or "error") == "error" for a in checks)
        inputs = [InputDataset(ds.namespace, ds.name, F.maybe({"dataQualityAssertions": F.assertions(checks)}),
                               facets=F.maybe({"symlinks": F.symlinks(ds)}))
                  for ds in self.datasets.relation(relation)]
        run_id = node_run_id(run.run_id, f"test.{test}")
        end_state = RunState.FAIL if failed else RunState.COMPLETE
        message = f"test {test} failed" if failed else None
        return [RunEvent(eventTime=F.iso(at), producer=PRODUCER, eventType=state, job=job, inputs=inputs, outputs=[],
                         run=Run(run_id, facets=self._run_facets(run, state, message)))
                for state, at in ((RunState.START, started_at), (end_state, ended_at))]


def assertions_from_tests(loaded: LoadedProject, results: Iterable[TestResult]) -> list[Assertion]:
    """Flatten test results (``dagster_streamt.checks.results.TestResult``) into per-column assertions, the
    columns taken from the test's declared parameters (``not_null: {columns: [a, b]}`` gives two)."""
    from ..checks.assertions import parse_assertions

    out: list[Assertion] = []
    for result in results:
        spec = loaded.project.tests.get(result.test)
        parsed = {p.index: p for p in parse_assertions(spec)[0]} if spec is not None else {}
        for a in result.assertions:
            p = parsed.get(a.index)
            columns: list[str | None] = list(p.params.columns_used()) if p is not None else []
            out += [Assertion(target=result.target, assertion=a.name, success=bool(a.passed) and not a.error,
                              column=column, severity=result.severity, name=result.test,
                              description=a.description or None, actual=str(a.failing_rows))
                    for column in columns or [None]]
    return out


def to_dict(event: Any) -> dict[str, Any]:
    """Spec JSON of an event (nulls dropped, enums as strings)."""
    return Serde.to_dict(event)

