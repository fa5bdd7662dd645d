"""OpenLineage events of a continuous run: streams have no natural end, so a consumer learns what they do
while they run, not after.

Shape, as the spec describes streaming jobs (``JobTypeJobFacet.processingType: STREAMING`` and, since
2-0-4, its ``emissionPattern``): the Dagster run is the parent, job ``<project>.continuous``; each stream
model is a child run of its model job ``<project>.<model>``. START when a query starts, RUNNING every
``interval_s`` while it runs, COMPLETE when it stopped cleanly (its checkpoint holds the last committed
micro-batch), FAIL when it gave up, ABORT when it never ran. Run ids are the ones :mod:`.events` gives
the same Dagster run, so a backend merges a run's events whoever sent them.

Each RUNNING event restates the run's totals so far (rows read and written since it started): the
pattern is ``PERIODIC`` / ``ACCUMULATIVE``, and a consumer keeps the latest figure of a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import input_statistics_input_dataset, job_type_job

from ..core.loaded import LoadedProject
from . import facets as F
from .events import DagsterRun, EventBuilder, node_run_id, parent_run_id
from .facets import INTEGRATION, PRODUCER

PARENT_JOB = "continuous"


@dataclass(frozen=True)
class StreamTotals:
    """What one stream model did since the continuous run started it."""

    model: str
    rows_in: int = 0
    rows_out: int = 0
    batches: int = 0


class StreamingEvents:
    """Builds the events of one continuous Dagster run (``run_id``) reporting every ``interval_s``.

    >>> from dagster_streamt import load
    >>> from datetime import datetime, UTC
    >>> events = StreamingEvents(load("project"), "9b0e6c7e-3a4f-4f43-9a47-6f0f3c1d2e5a", 60)
    >>> e = events.model_event(RunState.RUNNING, StreamTotals("orders_clean", 120, 118, 3), datetime.now(UTC))
    >>> e.job.facets["jobType"].processingType, e.job.facets["jobType"].emissionPattern.eventTrigger
    ('STREAMING', 'PERIODIC')
    >>> e.outputs[0].outputFacets["outputStatistics"].rowCount
    118
    """

    def __init__(self, loaded: LoadedProject, run_id: str, interval_s: float) -> None:
        self.builder = EventBuilder(loaded)
        self.datasets = self.builder.datasets
        self.run = DagsterRun(run_id)
        self.pattern = job_type_job.EmissionPattern(eventTrigger="PERIODIC", eventContentMode="ACCUMULATIVE",
                                                    windowDuration=max(1, round(interval_s)))

    def _job(self, job: Job, kind: str) -> Job:
        """The job with its type saying STREAMING and how its events come."""
        facets = dict(job.facets or {})
        facets["jobType"] = job_type_job.JobTypeJobFacet(processingType="STREAMING", integration=INTEGRATION,
                                                         jobType=kind, emissionPattern=self.pattern,
                                                         producer=PRODUCER)
        return Job(job.namespace, job.name, facets=facets)

    def parent_event(self, state: RunState, at: datetime, error: str | None = None) -> RunEvent:
        """The continuous Dagster run itself."""
        project = self.builder.project
        job = self._job(self.datasets.job(PARENT_JOB, "STREAMING", "JOB", project.info.description), "JOB")
        facets = F.run_facets("dagster", None, error if state in (RunState.FAIL, RunState.ABORT) else None)
        return RunEvent(eventTime=F.iso(at), producer=PRODUCER, eventType=state, job=job,
                        run=Run(parent_run_id(self.run.run_id), facets=facets), inputs=[], outputs=[])

    def model_event(self, state: RunState, totals: StreamTotals, at: datetime, error: str | None = None) -> RunEvent:
        """One stream model's run: START, RUNNING (totals so far), COMPLETE, FAIL or ABORT."""
        ds, model = self.datasets, totals.model
        parent = F.parent(self.builder.namespace, ds.job_name(PARENT_JOB), parent_run_id(self.run.run_id))
        failed = state in (RunState.FAIL, RunState.ABORT)
        facets = F.run_facets("spark", None, (error or state.value.lower()) if failed else None, None, parent)
        counting = state is not RunState.START
        inputs = ds.inputs(model)
        if counting and len(inputs) == 1:  # Spark counts a query's input rows, not each input's
            stats = input_statistics_input_dataset.InputStatisticsInputDatasetFacet(rowCount=totals.rows_in,
                                                                                     producer=PRODUCER)
            only = inputs[0]
            inputs = [InputDataset(only.namespace, only.name, {**(only.inputFacets or {}), "inputStatistics": stats},
                                   facets=only.facets)]
        outputs = ds.outputs(model, rows=totals.rows_out if counting else None)
        return RunEvent(eventTime=F.iso(at), producer=PRODUCER, eventType=state,
                        job=self._job(ds.model_job(model), "MODEL"),
                        run=Run(node_run_id(self.run.run_id, f"model.{model}"), facets=facets),
                        inputs=inputs, outputs=outputs)
