"""Small constructors for the OpenLineage facets this package emits, on openlineage-python's
``facet_v2`` classes. Each returns ``None`` when there is nothing to say, so callers can drop empty
facets with :func:`compact` instead of emitting facets with empty lists.

Every facet carries our ``_producer`` explicitly: ``facet_v2.set_producer`` would change a global
that other OpenLineage users in the same process (Dagster's own integration) rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    data_quality_assertions_dataset,
    dataset_type_dataset,
    documentation_dataset,
    documentation_job,
    error_message_run,
    job_type_job,
    nominal_time_run,
    output_statistics_output_dataset,
    ownership_dataset,
    ownership_job,
    parent_run,
    processing_engine_run,
    schema_dataset,
    source_code_location_job,
    sql_job,
    symlinks_dataset,
)
from openlineage.client.generated.base import DatasetFacet, JobFacet, RunFacet

from .. import __version__
from ..lineage.column_types import ColumnEdge, ModelColumnLineage
from ..spec.project import Project
from .naming import DatasetId

PRODUCER = f"https://github.com/dagster-streamt/dagster-streamt/tree/v{__version__}"
INTEGRATION = "DAGSTER_STREAMT"
T = TypeVar("T")


def compact(facets: Mapping[str, T | None]) -> dict[str, T]:
    """Drop facets that came out empty (``None``)."""
    return {k: v for k, v in facets.items() if v is not None}


def maybe(facets: Mapping[str, T | None]) -> dict[str, T] | None:
    """:func:`compact`, or None when nothing is left (serialized as no key rather than ``{}``)."""
    return compact(facets) or None


def iso(at: datetime) -> str:
    """UTC ISO-8601 with a zone (the spec's ``date-time``); a naive time is taken as UTC."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- datasets ------------------------------------------------------------------------------------
def schema(columns: Sequence[tuple[str, str | None, str | None]]) -> schema_dataset.SchemaDatasetFacet | None:
    """``columns``: (name, type, description); types are Spark SQL types as declared or observed."""
    if not columns:
        return None
    fields = [schema_dataset.SchemaDatasetFacetFields(name=n, type=t or None, description=d or None,
                                                      ordinal_position=i, fields=None)
              for i, (n, t, d) in enumerate(columns, start=1)]
    return schema_dataset.SchemaDatasetFacet(fields=fields, producer=PRODUCER)


def symlinks(ds: DatasetId) -> symlinks_dataset.SymlinksDatasetFacet | None:
    if not ds.symlinks:
        return None
    ids = [symlinks_dataset.Identifier(namespace=s.namespace, name=s.name, type=s.type) for s in ds.symlinks]
    return symlinks_dataset.SymlinksDatasetFacet(identifiers=ids, producer=PRODUCER)


def dataset_facets(ds: DatasetId, columns: Sequence[tuple[str, str | None, str | None]], description: str | None,
                   owner: str | None, lineage: Any = None) -> dict[str, DatasetFacet]:
    """What the project declares of a dataset (``columns`` as in :func:`schema`); ``lineage`` is a
    model's :func:`column_lineage`."""
    return compact({
        "schema": schema(columns),
        "symlinks": symlinks(ds),
        "datasetType": dataset_type_dataset.DatasetTypeDatasetFacet(datasetType=ds.kind, producer=PRODUCER),
        "documentation": documentation_dataset.DocumentationDatasetFacet(description=description, producer=PRODUCER)
        if description else None,
        "ownership": ownership_dataset.OwnershipDatasetFacet(owners=[ownership_dataset.Owner(name=owner)],
                                                             producer=PRODUCER) if owner else None,
        "columnLineage": lineage,
    })


def output_statistics(rows: int | None, size: int | None = None) -> Any:
    if rows is None and size is None:
        return None
    return output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(rowCount=rows, size=size,
                                                                                 producer=PRODUCER)


def written_bytes(materialized: str, location: str | None) -> int | None:
    """Bytes a table run wrote: its new version folder holds exactly that run's files. Unknown for
    streams (the output folder accumulates) and external sinks."""
    if materialized != "table" or not location or "://" in location:
        return None
    root = Path(location)
    if not root.is_dir():
        return None
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.name.startswith((".", "_")))


# -- column lineage ------------------------------------------------------------------------------
Resolve = Callable[[str], Sequence[DatasetId]]


def _input_fields(edges: Iterable[ColumnEdge], resolve: Resolve) -> list[column_lineage_dataset.InputField]:
    """One InputField per input column, carrying every way it is used (JOIN and GROUP_BY ...)."""
    grouped: dict[tuple[str, str], list[ColumnEdge]] = {}
    for edge in edges:
        grouped.setdefault((edge.source.relation, edge.source.column), []).append(edge)
    out: list[tuple[tuple[str, str, str], column_lineage_dataset.InputField]] = []
    for (relation, column), found in grouped.items():
        transformations = [column_lineage_dataset.Transformation(type=e.type, subtype=e.subtype)
                           for e in sorted(set(found))]
        for ds in resolve(relation):
            out.append(((ds.namespace, ds.name, column), column_lineage_dataset.InputField(
                namespace=ds.namespace, name=ds.name, field=column, transformations=transformations)))
    return [f for _, f in sorted(out, key=lambda x: x[0])]


def column_lineage(lineage: ModelColumnLineage | None,
                   resolve: Resolve) -> column_lineage_dataset.ColumnLineageDatasetFacet | None:
    """Per output column its input columns (DIRECT and column-specific INDIRECT edges); row-level
    INDIRECT edges (joins, filters, grouping) go into ``dataset`` as the 1-2-0 facet allows.
    Output columns with no input (``count(*)``) are left out, as the Spark listener does."""
    if lineage is None:
        return None
    fields = {col: column_lineage_dataset.Fields(inputFields=inputs) for col in lineage.columns
              if (inputs := _input_fields(lineage.fields.get(col, ()), resolve))}
    dataset = _input_fields(lineage.dataset, resolve)
    if not fields and not dataset:
        return None
    return column_lineage_dataset.ColumnLineageDatasetFacet(fields=fields, dataset=dataset, producer=PRODUCER)


# -- data quality --------------------------------------------------------------------------------
@dataclass(frozen=True, order=True)
class Assertion:
    """One evaluated assertion on a dataset, for the ``dataQualityAssertions`` input facet.

    ``target`` is a graph node id (``source.orders_raw``, ``model.orders_clean``)."""

    target: str
    assertion: str
    success: bool
    column: str | None = None
    severity: str | None = None
    name: str | None = None
    description: str | None = None
    actual: str | None = None


def assertions(found: Sequence[Assertion]) -> data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet | None:
    if not found:
        return None
    items = [data_quality_assertions_dataset.Assertion(
        assertion=a.assertion, success=a.success, column=a.column, severity=a.severity, name=a.name,
        description=a.description, actual=a.actual) for a in sorted(found)]
    return data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(assertions=items, producer=PRODUCER)


# -- jobs ----------------------------------------------------------------------------------------
def job_facets(processing: str, kind: str, description: str | None, owner: str | None = None,
               query: str | None = None, location: Any = None) -> dict[str, JobFacet]:
    """A job's type, SQL, documentation and owner; ``location`` is its :func:`source_code_location`."""
    return compact({
        "jobType": job_type_job.JobTypeJobFacet(processingType=processing, integration=INTEGRATION, jobType=kind,
                                                producer=PRODUCER),
        "sql": sql_job.SQLJobFacet(query=query, dialect="spark", producer=PRODUCER) if query else None,
        "documentation": documentation_job.DocumentationJobFacet(description=description, producer=PRODUCER)
        if description else None,
        "ownership": ownership_job.OwnershipJobFacet(owners=[ownership_job.Owner(name=owner)], producer=PRODUCER)
        if owner else None,
        "sourceCodeLocation": location,
    })


def source_code_location(project: Project, kind: str, name: str) -> Any:
    """The YAML file (and line) that defines an entity, as a ``file://`` URL; ``version`` is the
    file's content hash, so a catalog sees when the definition changed."""
    file, line = project.where(kind, name)
    if not file:
        return None
    url = (project.root.resolve() / file).as_uri() + (f"#L{line}" if line else "")
    return source_code_location_job.SourceCodeLocationJobFacet(
        type="file", url=url, path=file, version=project.file_hashes.get(file), producer=PRODUCER)


# -- runs ----------------------------------------------------------------------------------------
def package_version(package: str) -> str:
    """A package's version from its metadata: no import (pyspark's would be slow, never a JVM)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def parent(namespace: str, job_name: str, run_id: str) -> parent_run.ParentRunFacet:
    """The Dagster run is both parent and root of a model run."""
    return parent_run.ParentRunFacet(
        run=parent_run.Run(runId=run_id, facets=None),
        job=parent_run.Job(namespace=namespace, name=job_name, facets=None),
        root=parent_run.Root(run=parent_run.RootRun(runId=run_id, facets=None),
                             job=parent_run.RootJob(namespace=namespace, name=job_name, facets=None)),
        producer=PRODUCER)


def run_facets(engine: str, window: tuple[datetime, datetime] | None, error: str | None,
               stack_trace: str | None = None, parent_facet: parent_run.ParentRunFacet | None = None,
               ) -> dict[str, RunFacet]:
    """``engine``: ``spark`` for model runs, ``dagster`` for the Dagster run that schedules them;
    ``window`` (start, end) becomes ``nominalTime``; ``error``: the message of a run that failed."""
    return compact({
        "parent": parent_facet,
        "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
            version=package_version("pyspark" if engine == "spark" else engine), name=engine,
            openlineageAdapterVersion=__version__, producer=PRODUCER),
        "nominalTime": nominal_time_run.NominalTimeRunFacet(
            nominalStartTime=iso(window[0]), nominalEndTime=iso(window[1]), producer=PRODUCER) if window else None,
        "errorMessage": error_message_run.ErrorMessageRunFacet(
            message=error, programmingLanguage="PYTHON", stackTrace=stack_trace, producer=PRODUCER) if error else None,
    })
