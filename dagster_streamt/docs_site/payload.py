"""The docs site's data: one JSON document built from a loaded project (plus, when the project has
run, its last runs and test results), sorted so the same project always gives the same bytes.

The page draws and answers everything from this document: node list and graph (``nodes``, with
``edges`` as index pairs), each entity's page, column lineage (see :mod:`.columns`) and its search
index. Model SQL is kept apart under ``sql`` (the site stores it in a second data block that the
page parses only when a model is opened). Secrets are redacted like ``target/manifest.json``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import yaml

try:
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

from .. import __version__
from ..core.loaded import LoadedProject
from ..graph.graph import Node
from ..graph.select import SelectionError, select
from ..lineage.column_types import ProjectColumnLineage
from ..spec.envvars import Redactor
from ..spec.models import Strict
from ..spec.project import Project
from .columns import column_sections
from .run_state import RunState

FORMAT = 1
# shown in a page's own fields, so left out of its "configuration" list
_SHOWN = {"name", "description", "owner", "tags", "columns", "sql", "materialized", "security", "assertions"}


def _config(obj: Strict, red: Redactor) -> dict[str, Any]:
    """Every key the user set (defaults left out), for the page's configuration list."""
    dumped = obj.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude_none=True)
    return dict(sorted(red.value({k: v for k, v in dumped.items() if k not in _SHOWN}).items()))


def _node(project: Project, node: Node, red: Redactor) -> dict[str, Any]:
    file, line = project.where(node.type, node.name)
    out: dict[str, Any] = {"id": node.id, "type": node.type, "name": node.name}
    for key, value in (("materialized", node.materialized), ("owner", node.owner), ("detail", node.detail),
                       ("description", node.description and red.text(node.description)), ("file", file)):
        if value:
            out[key] = value
    if node.tags:
        out["tags"] = list(node.tags)
    if line:
        out["line"] = line
    return out


def _assertion(assertion: dict[str, Any]) -> str:
    """One assertion as the YAML line a user would write (``unique: {columns: [id]}``)."""
    (name, params), = assertion.items()
    text = yaml.dump(params, Dumper=_Dumper, default_flow_style=True, sort_keys=True, width=10**6,
                     allow_unicode=True)
    return f"{name}: {text.strip().removesuffix('...').strip()}"


def _tests(project: Project, red: Redactor) -> dict[str, Any]:
    out = {}
    for name in sorted(project.tests):
        t = project.tests[name]
        out[name] = {"target": f"model.{t.model}" if t.model else f"source.{t.source}", "type": t.type,
                     "severity": t.severity or project.defaults.tests.severity,
                     "assertions": [red.text(_assertion(a)) for a in t.assertions],
                     "config": _config(t, red)}
    return out


def _schedules(loaded: LoadedProject, red: Redactor) -> dict[str, Any]:
    out = {}
    for name in sorted(loaded.project.schedules):
        s = loaded.project.schedules[name]
        entry: dict[str, Any] = {"cron": s.cron, "timezone": s.timezone, "select": s.select,
                                 "enabled": loaded.project.runtime.automations.starts(s.enabled),
                                 "description": red.text(s.description or "")}
        try:
            entry["models"] = select(loaded.graph, s.select)
        except SelectionError as exc:  # a valid project has none; shown rather than dropped
            entry["models"], entry["error"] = [], str(exc)
        file, line = loaded.project.where("schedule", name)
        entry["file"], entry["line"] = file, line
        out[name] = entry
    return out


def _models(loaded: LoadedProject, red: Redactor) -> tuple[dict[str, Any], dict[str, list[str | None]]]:
    """(model entries, model -> [compiled SQL, SQL as written when it differs])."""
    out: dict[str, Any] = {}
    sql: dict[str, list[str | None]] = {}
    for name in sorted(loaded.compiled.models):
        cm, m = loaded.compiled.models[name], loaded.project.models[name]
        entry: dict[str, Any] = {"config": _config(m, red)}
        if cm.from_:
            entry["from"] = cm.from_
        if name in loaded.project.inferred:
            entry["materialized_inferred_from"] = loaded.project.inferred[name]
        out[name] = entry
        if m.sql is None:  # `from:` only: the page says what it passes through, not a generated SELECT *
            continue
        written = m.sql if m.sql.strip() != (cm.sql or "").strip() else None
        if cm.sql or written:
            sql[name] = [red.text(cm.sql) if cm.sql else None, red.text(written) if written else None]
    return out, sql


def build_payload(loaded: LoadedProject, lineage: ProjectColumnLineage, state: RunState | None) -> dict[str, Any]:
    p, g = loaded.project, loaded.graph
    red = Redactor(p.secrets)
    ids = list(g.nodes)  # sorted when the graph was frozen
    index = {nid: i for i, nid in enumerate(ids)}
    nodes = [_node(p, g.nodes[nid], red) for nid in ids]
    columns = column_sections(loaded, lineage, red)
    models, sql = _models(loaded, red)
    for name, entry in models.items():
        entry.update(columns["model_columns"][name])
    return {
        "format": FORMAT,
        "generator": f"dagster-streamt {__version__}",
        "project": {"name": p.name, "version": p.info.version, "description": red.text(p.info.description or ""),
                    "env": p.env},
        "nodes": nodes,
        "edges": [[index[s], index[d]] for s, d in g.edges()],
        "models": models,
        "sources": {n: {"columns": columns["source_columns"][n], "config": _config(p.sources[n], red)}
                    for n in sorted(p.sources)},
        "exposures": {n: {"config": _config(p.exposures[n], red)} for n in sorted(p.exposures)},
        "tests": _tests(p, red),
        "schedules": _schedules(loaded, red),
        "pii": columns["pii"],
        "lineage_types": columns["lineage_types"],
        "diagnostics": [{"severity": d.severity.value, "code": d.code, "message": red.text(d.message),
                         "file": d.file, "line": d.line, "hint": red.text(d.hint)}
                        for d in sorted(loaded.diagnostics, key=lambda d: (d.file, d.line, d.code, d.message))],
        "state": asdict(state) if state is not None else None,  # data_block sorts its keys
        "sql": sql,
    }
