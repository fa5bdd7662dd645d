"""The ``<project>_continuous`` job: the project's stream models running as long-lived queries inside one
Dagster run, started from the UI's launchpad with no config, and stopped by terminating the run.

Why one op that stays up, not Dagster Pipes: the queries live in the Spark session the op opens through
the ``spark`` resource, the same session and code a ``streamt run`` uses; Pipes would add a second
process whose only job would be to relay what the op yields itself. An op's yields reach the event log
as they happen (each micro-batch as a materialization of its model), and terminating the run interrupts
the op (Dagster's run launcher sends it SIGINT), which is where the queries are stopped cleanly.

No `from __future__ import annotations`: Dagster reads the op's runtime type hints (its config class).
"""

from collections.abc import Iterator
from typing import Any

import dagster as dg
from pydantic import Field

from ..api import LoadedProject
from ..core import metadata as meta
from .key_map import KeyMap
from .resources import RunOptions, SparkResource

JOB_SUFFIX = "_continuous"


class ContinuousConfig(dg.Config):
    """What a continuous run runs and how often it reports; every field has a default, so the launchpad
    starts the project's streams as they are."""

    select: str | None = Field(default=None, description=(
        "Models to keep running (selection syntax: name, +name, tag:x); default every stream model. Tables and "
        "views upstream of a selected stream run once first; other non-stream models are skipped."))
    max_restarts: int | None = Field(default=None, description=(
        "Give up on a model after this many failed restarts in a row (default: restart forever, with "
        "backoff from 1 s to 60 s)."))
    report_every_s: float = Field(default=2.0, description=(
        "How often each running model's progress is looked at; each look that saw committed micro-batches "
        "is reported as a materialization of the model."))
    check_every_s: float = Field(default=10.0, description=(
        "How often the stream models' continuous tests are judged (asset checks), when new rows arrived."))
    lineage_every_s: float = Field(default=60.0, description=(
        "How often OpenLineage RUNNING events restate each stream's totals (runtime.openlineage)."))


def stream_models(loaded: LoadedProject) -> list[str]:
    """The enabled stream models, sorted: what the job runs by default."""
    return sorted(n for n, m in loaded.project.models.items() if m.materialized == "stream" and m.enabled)


def continuous_job_name(loaded: LoadedProject) -> str:
    return f"{loaded.project.ident}{JOB_SUFFIX}"


def build_continuous_job(loaded: LoadedProject, keys: KeyMap) -> dg.JobDefinition | None:
    """The job, or None when the code location has no stream model to run."""
    if not [n for n in stream_models(loaded) if n in keys.models]:
        return None

    @dg.op(name=f"{loaded.project.ident}_streams", tags={"kind": "spark"},
           description="Runs the stream models as long-lived Structured Streaming queries until the run is "
                       "terminated; each committed micro-batch is reported on its model's asset.")
    def streams(context: dg.OpExecutionContext, config: ContinuousConfig, spark: SparkResource,
                run_options: RunOptions) -> Iterator[Any]:
        from .continuous_run import LiveStreams

        refresh = run_options.models(loaded.project)  # a typo fails here, before Spark starts
        yield from LiveStreams(context, loaded, keys, config).run(spark, refresh)

    @dg.job(name=continuous_job_name(loaded), tags={meta.MODE: meta.CONTINUOUS},
            description=f"Keeps project {loaded.project.name!r}'s stream models running until the run is "
                        "terminated (Terminate in the UI stops the queries cleanly; the next run resumes "
                        "where this one stopped).")
    def continuous() -> None:
        streams()

    return continuous
