"""Jobs and datasets of one project as OpenLineage objects, shared by run events and the static export.

A model is a job ``<project>.<model>`` in the project namespace; it reads its sources and upstream
models and writes one dataset (see :mod:`naming`). Facets describe what the project declares;
run-time facts (output schema, row counts) are passed in by the run event builder.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, StaticDataset
from openlineage.client.generated.base import InputDatasetFacet

from ..compile.modes import appends
from ..core.loaded import LoadedProject
from ..graph.graph import split_id
from ..lineage.column_types import ProjectColumnLineage
from . import facets as F
from .naming import DatasetId, ProjectNaming

Columns = list[tuple[str, str | None, str | None]]  # (name, type, description)


class ProjectDatasets:
    """Datasets, schemas and jobs of a loaded project. ``columns`` (static column lineage, or None)
    plugs in the ``columnLineage`` facet; without it outputs simply carry no column facet."""

    def __init__(self, loaded: LoadedProject, namespace: str | None = None,
                 columns: ProjectColumnLineage | None = None) -> None:
        self.loaded = loaded
        self.project = loaded.project
        self.naming = ProjectNaming(loaded.project, namespace)
        self.namespace = self.naming.namespace
        self.columns = columns

    # -- names -----------------------------------------------------------------------------------
    def job_name(self, model: str) -> str:
        return f"{self.project.name}.{model}"

    def relation(self, name: str) -> tuple[DatasetId, ...]:
        return self.naming.relation(name)

    def materialized(self, model: str) -> str:
        m = self.project.models[model]
        return m.materialized or self.project.defaults.models.materialized or "table"

    def upstream(self, model: str) -> list[str]:
        """Relation names a model reads: its sources, then upstream models (a sink's ``from:``)."""
        cm = self.loaded.compiled.models.get(model)
        return [*cm.sources, *cm.upstream_models] if cm else []

    def processing_type(self, model: str) -> str:
        """STREAMING for stream models and for sinks that read an appending stream, else BATCH."""
        kind = self.materialized(model)
        if kind == "stream":
            return "STREAMING"
        if kind == "sink":
            cm = self.loaded.compiled.models.get(model)
            for up in cm.upstream_models if cm else ():
                m = self.project.models.get(up)
                if m is not None and self.materialized(up) == "stream" and appends(self.project, m):
                    return "STREAMING"
        return "BATCH"

    def sql(self, model: str) -> str | None:
        cm = self.loaded.compiled.models.get(model)
        if cm is None:
            return None
        return cm.sql or (f"SELECT * FROM `{cm.from_}`" if cm.from_ else None)  # a sink passes its input on

    # -- schemas ---------------------------------------------------------------------------------
    @cached_property
    def _inferred(self) -> dict[tuple[str, str], str]:
        if self.columns is None:
            return {}
        from ..lineage.project_columns import inferred_types  # sqlglot: only with column lineage

        return inferred_types(self.loaded, self.columns)

    def schema_of(self, name: str, observed: Sequence[tuple[str, str]] = ()) -> Columns:
        """Observed (run result) columns when given, else declared ones, else the SELECT list with
        types carried through identity edges; descriptions come from the declarations."""
        entity = self.project.models.get(name) or self.project.sources.get(name)
        declared = {c.name: c for c in entity.columns} if entity is not None else {}
        if observed:
            return [(n, t, declared[n].description if n in declared else None) for n, t in observed]
        if declared:
            return [(c.name, c.type, c.description) for c in declared.values()]
        cm = self.loaded.compiled.models.get(name)
        names = list(cm.output_columns or ()) if cm else []
        if not names and self.columns is not None and name in self.columns.models:
            names = list(self.columns.models[name].columns)
        types = self._inferred
        return [(n, types.get((name, n)), None) for n in names]

    # -- datasets --------------------------------------------------------------------------------
    def inputs(self, model: str, assertions: Sequence[F.Assertion] = ()) -> list[InputDataset]:
        out: list[InputDataset] = []
        for rel in self.upstream(model):
            node = f"model.{rel}" if rel in self.project.models else f"source.{rel}"
            checks = [a for a in assertions if a.target == node]
            for ds in self.relation(rel):
                facets = F.compact({"schema": F.schema(self.schema_of(rel)), "symlinks": F.symlinks(ds)})
                checks_facet: dict[str, InputDatasetFacet] | None = F.maybe(
                    {"dataQualityAssertions": F.assertions(checks)})
                out.append(InputDataset(ds.namespace, ds.name, checks_facet, facets=facets))
        return sorted(out, key=lambda d: (d.namespace, d.name))

    def outputs(self, model: str, observed: Sequence[tuple[str, str]] = (), rows: int | None = None,
                size: int | None = None) -> list[OutputDataset]:
        ds = self.naming.model(model)
        stats = F.maybe({"outputStatistics": F.output_statistics(rows, size)})
        lineage = self.columns.models.get(model) if self.columns is not None else None
        facets = F.dataset_facets(ds, self.schema_of(model, observed), self.project.models[model].description,
                                  self.owner(model), F.column_lineage(lineage, self.relation))
        return [OutputDataset(ds.namespace, ds.name, stats, facets=facets)]

    def owner(self, model: str) -> str | None:
        return self.project.models[model].owner or self.project.defaults.models.owner

    def source_datasets(self, name: str) -> list[StaticDataset]:
        """A source as static datasets (one per Kafka topic), with what the project declares."""
        src = self.project.sources[name]
        owner = src.owner or self.project.defaults.sources.owner
        return [StaticDataset(ds.namespace, ds.name,
                              facets=F.dataset_facets(ds, self.schema_of(name), src.description, owner))
                for ds in self.relation(name)]

    # -- jobs ------------------------------------------------------------------------------------
    def job(self, name: str, processing: str, kind: str, description: str | None, owner: str | None = None,
            defined_by: tuple[str, str] | None = None, sql: str | None = None) -> Job:
        """Job ``<project>.<name>``; ``defined_by`` (kind, name) points at its YAML definition."""
        location = F.source_code_location(self.project, *defined_by) if defined_by else None
        return Job(self.namespace, self.job_name(name),
                   facets=F.job_facets(processing, kind, description, owner, sql, location))

    def model_job(self, model: str) -> Job:
        return self.job(model, self.processing_type(model), "MODEL", self.project.models[model].description,
                        self.owner(model), ("model", model), self.sql(model))

    def exposure_job(self, name: str) -> tuple[Job, list[InputDataset], list[OutputDataset]]:
        """An exposure (dashboard, application) as a job reading what it consumes: catalogs then show
        who depends on a model, which is what an exposure is for."""
        e = self.project.exposures[name]
        job = self.job(f"exposure.{name}", "SERVICE", e.type.upper(), e.description, e.owner, ("exposure", name))
        node = f"exposure.{name}"
        reads = [split_id(n)[1] for n in self.loaded.graph.upstream_of(node)]
        writes = [split_id(n)[1] for n in self.loaded.graph.downstream_of(node)]
        inputs = {ds.key: InputDataset(ds.namespace, ds.name, facets=F.maybe({"symlinks": F.symlinks(ds)}))
                  for rel in reads for ds in self.relation(rel)}
        outputs = {ds.key: OutputDataset(ds.namespace, ds.name, facets=F.maybe({"symlinks": F.symlinks(ds)}))
                   for rel in writes for ds in self.relation(rel)}
        return job, [inputs[k] for k in sorted(inputs)], [outputs[k] for k in sorted(outputs)]
