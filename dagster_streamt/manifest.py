"""``target/manifest.json`` and ``target/compiled/<model>.sql``: sorted, versioned, content-hashed,
with secrets redacted (values from secret-named variables and under secret-named keys)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from . import __version__
from .core.files import atomic_write
from .core.loaded import LoadedProject
from .spec.envvars import Redactor

MANIFEST_VERSION = 1


def _dump(obj: Any) -> Any:
    return obj.model_dump(mode="json", by_alias=True, exclude_defaults=False)


def build_manifest(loaded: LoadedProject) -> dict[str, Any]:
    p, c, g = loaded.project, loaded.compiled, loaded.graph
    red = Redactor(p.secrets)

    def section(kind: str, items: dict[str, Any]) -> dict[str, Any]:
        """Each item as its YAML reads, and where: ``original_file`` is ``file:line``."""
        return {name: {**_dump(obj), "original_file": "{}:{}".format(*p.where(kind, name))}
                for name, obj in items.items()}

    models = section("model", p.models)
    for name, entry in models.items():
        cm = c.models.get(name)
        entry["compiled_sql"] = cm.sql if cm else None
        entry["spark_sql"] = cm.spark_sql if cm else None
        entry["depends_on"] = {"models": list(cm.upstream_models) if cm else [],
                               "sources": list(cm.sources) if cm else []}
        entry["output_columns"] = list(cm.output_columns) if cm and cm.output_columns else None
        entry["sql_hash"] = cm.sql_hash if cm else None
        if name in p.legacy_materializations:
            entry["streamt_materialized"] = p.legacy_materializations[name]
        if name in p.inferred:
            entry["materialized_inferred_from"] = p.inferred[name]

    body: dict[str, Any] = {
        "metadata": {"manifest_version": MANIFEST_VERSION, "generator": f"dagster-streamt {__version__}",
                     "project": p.name, "env": p.env},
        "project": _dump(p.info),
        "runtime": _dump(p.runtime),
        "rules": _dump(p.rules),
        "vars": p.vars,
        "sources": section("source", p.sources),
        "models": models,
        "tests": section("test", p.tests),
        "exposures": section("exposure", p.exposures),
        "schedules": section("schedule", p.schedules),
        "dag": {
            "nodes": [n.to_dict() for n in g.nodes.values()],
            "edges": [{"from": s, "to": d} for s, d in g.edges()],
            "execution_levels": g.execution_levels(g.of_type("model")),
        },
        "files": p.file_hashes,
    }
    body = red.value(body)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    body["content_hash"] = hashlib.sha256(text.encode()).hexdigest()
    return body


def write_manifest(loaded: LoadedProject, target: Path | None = None) -> Path:
    target = target or (loaded.project.root / "target")
    (target / "compiled").mkdir(parents=True, exist_ok=True)
    manifest = build_manifest(loaded)
    path = target / "manifest.json"
    atomic_write(path, json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n")
    red = Redactor(loaded.project.secrets)
    wanted = set()
    for name, cm in loaded.compiled.models.items():
        if cm.sql:
            out = target / "compiled" / f"{name}.sql"
            out.write_text(f"-- model {name} ({cm.materialized}), compiled by dagster-streamt\n"
                           f"{red.text(cm.sql)}\n")
            wanted.add(out.name)
        if cm.spark_sql:  # the Flink SQL as Spark runs it, next to the SQL as written
            out = target / "compiled" / f"{name}.spark.sql"
            out.write_text(f"-- model {name}: the Flink SQL of {name}.sql translated for Spark\n"
                           f"{red.text(cm.spark_sql)}\n")
            wanted.add(out.name)
    for stale in (target / "compiled").glob("*.sql"):
        if stale.name not in wanted:
            stale.unlink()
    return path
