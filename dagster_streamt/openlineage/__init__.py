"""OpenLineage for streamt projects: dataset naming, run events, a static export and durable delivery.

No Spark or Dagster import happens here, so the CLI can export lineage without either:

* :mod:`naming`    dataset identities per the OpenLineage naming spec (as the Spark listener names them)
* :mod:`events`    run events for a Dagster run and the model and test runs inside it
* :mod:`static`    the whole project as ``JobEvent`` / ``DatasetEvent`` before any run
* :mod:`transport` configuration, and ``emit_all``: queue durably, send in order, back off on failure
"""

from __future__ import annotations

from .events import DagsterRun, EventBuilder, assertions_from_tests, node_run_id, parent_run_id, to_dict
from .facets import Assertion
from .naming import DatasetId, ProjectNaming, Symlink, project_namespace
from .static import static_events, write_jsonl
from .transport import (
    DeliveryReport,
    LegReport,
    build_transport,
    emit_all,
    resolve_transport_config,
    state_dir,
)

__all__ = [
    "Assertion",
    "DagsterRun",
    "DatasetId",
    "DeliveryReport",
    "EventBuilder",
    "LegReport",
    "ProjectNaming",
    "Symlink",
    "assertions_from_tests",
    "build_transport",
    "emit_all",
    "node_run_id",
    "parent_run_id",
    "project_namespace",
    "resolve_transport_config",
    "state_dir",
    "static_events",
    "to_dict",
    "write_jsonl",
]
