"""Sink checks for ``streamt validate``: how each sink writes, said before it runs.

A sink of a snapshot (table, view) replaces its export on every run unless it asks for ``mode:
append`` (a history that grows by a whole snapshot per run): worth a note, since a reader summing
the export counts every run. Modes that cannot work are errors with the fix.
"""

from __future__ import annotations

from ..compile.modes import appends
from ..core.object_stores import EXPORT_MANIFEST, is_object_uri
from ..graph.graph import Graph
from ..spec.connectors import model_key, sink_target
from ..spec.errors import Diagnostics, Severity
from ..spec.project import Project
from ..spec.topics import local_dir


def _stream_inputs(project: Project, graph: Graph, name: str) -> list[str]:
    return sorted(n for n in graph.upstream_models(name) if n in project.models and appends(project, project.models[n]))


def check_sinks(project: Project, graph: Graph) -> Diagnostics:
    diags = Diagnostics()
    for name, m in sorted(project.models.items()):
        sink = m.sink_config
        if m.materialized != "sink" or sink is None:
            continue
        file, line = project.where("model", name, "sink", "mode")
        target = sink_target(sink, name, local_dir(project))
        if target.error is not None:
            file, line = project.where("model", name)
            diags.add("STR081", f"sink {name!r}: {target.error}", file=file, line=line,
                      hint="write the sink with a Spark writer: `sink: {format: ..., path: ...}`")
            continue
        if sink.connector is not None and sink.format is None and local_dir(project) is not None:
            diags.add("STR084", f"sink {name!r} ({sink.connector}): in local mode (runtime.kafka.local_dir) it "
                      f"writes JSON files to {target.path}/ instead of its external system", file=file, line=line,
                      severity=Severity.NOTE, hint="run without local_dir (or another environment) to write to "
                      "the real system")
        if target.path and is_object_uri(target.path) and target.format != "delta":
            manifest = f"{target.path.rstrip('/')}/{EXPORT_MANIFEST}"
            diags.add("STR085", f"sink {name!r}: a {target.format} export to an object store is published as a "
                      f"manifest: {manifest} lists the files of its current version (one URI a line), replaced in "
                      "one write; the folder itself holds every kept version", file=file, line=line,
                      severity=Severity.NOTE,
                      hint="read the files the manifest lists (Athena, Trino and Hive read it as a symlink table), "
                      "or write `sink: {format: delta, path: ...}` for readers that open a path")
        if target.package is not None:
            diags.add("STR082", f"sink {name!r} ({sink.connector}) is written by Spark's `{target.format}` writer, "
                      f"which needs the package {target.package}", file=file, line=line, severity=Severity.NOTE,
                      hint=f"add it to `runtime.spark.conf.spark.jars.packages` ({target.package}:<version>)")
        if target.unused:
            diags.add("STR083", f"sink {name!r}: Kafka Connect settings {', '.join(target.unused)} have no effect on "
                      "Spark (it writes whole micro-batches, with no converters or tasks)", file=file, line=line,
                      severity=Severity.NOTE, hint="nothing to do; they are kept for streamt")
        streams = _stream_inputs(project, graph, name)
        mode = sink.mode
        if mode == "append" and not streams and target.format != "kafka":
            diags.add("STR080", f"sink {name!r} appends: every run adds its input's whole current snapshot to the "
                      "export again (a history), so readers see each run's rows", file=file, line=line,
                      severity=Severity.NOTE,
                      hint="remove `mode: append` to make the export equal to the current rows after each run")
        if mode == "upsert" and not model_key(m):
            diags.add("STR081", f"sink {name!r}: mode upsert needs a key", file=file, line=line,
                      hint="add `key: [column, ...]` under `sink:` (or the model's `key:`)")
        if mode in ("replace", "overwrite") and streams:
            diags.add("STR081", f"sink {name!r}: mode {mode} needs a snapshot input, but it reads stream "
                      f"{', '.join(streams)}, which is exported incrementally", file=file, line=line,
                      hint="remove `mode:` (each micro-batch is appended exactly once) or add a key to upsert")
        if target.format == "kafka" and mode in ("replace", "overwrite", "upsert"):
            diags.add("STR081", f"sink {name!r}: a Kafka topic is a log; mode {mode} cannot apply", file=file,
                      line=line, hint="use `mode: append` (a compacted topic keeps the latest value per key)")
    return diags
