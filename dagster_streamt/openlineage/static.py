"""The parsed project as static OpenLineage events (spec 2-0-2 ``JobEvent`` / ``DatasetEvent``): a
catalog shows the lineage before the first run, with no fake runs in its history.

* one ``DatasetEvent`` per source dataset (sources have no producing job in the project);
* one ``JobEvent`` per model: inputs, its output with schema and column lineage, job facets;
* one ``JobEvent`` per exposure: it reads what it consumes (and writes what it produces).

The output is sorted (datasets, then jobs, by name) and its ``eventTime`` is the newest
modification time of the project's files, so exporting an unchanged project gives identical bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openlineage.client.event_v2 import DatasetEvent, JobEvent

from ..core.files import atomic_writer
from ..core.loaded import LoadedProject
from ..lineage.column_types import ProjectColumnLineage
from . import facets as F
from .datasets import ProjectDatasets
from .events import to_dict
from .facets import PRODUCER


def definitions_time(loaded: LoadedProject) -> datetime:
    """When the definitions last changed: the newest mtime among the project's files."""
    root = loaded.project.root
    stamps = [(root / rel).stat().st_mtime for rel in loaded.project.file_hashes if (root / rel).is_file()]
    return datetime.fromtimestamp(max(stamps, default=0), tz=UTC).replace(microsecond=0)


def static_events(loaded: LoadedProject, namespace: str | None = None, *,
                  columns: ProjectColumnLineage | None = None, with_columns: bool = True,
                  event_time: datetime | None = None) -> list[dict[str, Any]]:
    """Every source, model and exposure as spec JSON. Column lineage is computed (cached in
    ``target/``) unless given in ``columns`` or turned off with ``with_columns=False``."""
    if columns is None and with_columns:
        from ..lineage.project_columns import column_lineage

        columns = column_lineage(loaded)
    ds = ProjectDatasets(loaded, namespace, columns)
    at = F.iso(event_time or definitions_time(loaded))
    datasets: dict[tuple[str, str], DatasetEvent] = {}
    for name in sorted(loaded.project.sources):
        for d in ds.source_datasets(name):
            datasets.setdefault((d.namespace, d.name), DatasetEvent(eventTime=at, producer=PRODUCER, dataset=d))
    jobs: dict[str, JobEvent] = {}
    for name in sorted(loaded.project.models):
        if not loaded.project.models[name].enabled or name not in loaded.compiled.models:
            continue
        job = ds.model_job(name)
        jobs[job.name] = JobEvent(eventTime=at, producer=PRODUCER, job=job, inputs=ds.inputs(name),
                                  outputs=ds.outputs(name))
    for name in sorted(loaded.project.exposures):
        job, inputs, outputs = ds.exposure_job(name)
        jobs[job.name] = JobEvent(eventTime=at, producer=PRODUCER, job=job, inputs=inputs, outputs=outputs)
    return [to_dict(datasets[k]) for k in sorted(datasets)] + [to_dict(jobs[k]) for k in sorted(jobs)]


def write_jsonl(events: Iterable[dict[str, Any]], path: str | Path) -> Path:
    """Write events as compact, key-sorted JSON lines, atomically (a reader never sees half an export)."""
    target = Path(path)
    with atomic_writer(target) as fh:
        for event in events:
            fh.write(json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")
    return target
