"""Plan and run helpers for the Spark tests (the real planner lives in dagster_streamt.graph)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dagster_streamt.compile.render import render_sql
from dagster_streamt.spark import ModelResult, run_models
from dagster_streamt.spec.envvars import EnvResolver
from dagster_streamt.spec.project import Project


def upstream_of(project: Project) -> dict[str, set[str]]:
    ups: dict[str, set[str]] = {}
    for name, model in project.models.items():
        refs = set(render_sql(name, model.sql, variables=project.vars, resolver=EnvResolver({})).refs) \
            if model.sql else set()
        if model.from_:
            refs.add(model.from_)
        ups[name] = {r for r in refs if r in project.models and r != name}
    return ups


def plan(project: Project, names: Iterable[str] | None = None) -> tuple[list[str], list[list[str]],
                                                                       dict[str, set[str]]]:
    """(models in topological order, levels, upstream) for ``names`` (default: every model)."""
    ups = upstream_of(project)
    wanted = set(names) if names is not None else set(project.models)
    levels: list[list[str]] = []
    done: set[str] = set()
    while len(done) < len(wanted):
        level = sorted(n for n in wanted - done if not (ups[n] & wanted) - done)
        assert level, "cycle"
        levels.append(level)
        done |= set(level)
    return [m for level in levels for m in level], levels, ups


def run(spark: Any, project: Project, names: Iterable[str] | None = None,
        full_refresh: Iterable[str] = ()) -> dict[str, ModelResult]:
    models, levels, ups = plan(project, names)
    return {r.model: r for r in run_models(spark, project, models, levels, ups, set(full_refresh))}


def rows(spark: Any, path: str | Path, fmt: str = "parquet", **options: str) -> list[dict[str, Any]]:
    """The rows stored at ``path``; a Delta table (the warehouse's default) is read as one, whatever ``fmt``
    says: its folder also holds the files of older versions."""
    if (Path(path) / "_delta_log").is_dir():
        fmt = "delta"
    return [r.asDict() for r in spark.read.format(fmt).options(**options).load(str(path)).collect()]


def jsonl(records: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def run_seeing_java(cmd: list[str], env: dict[str, str], timeout: float = 300) -> tuple[int, str, list[str]]:
    """Run ``cmd``; its exit code, output, and the command lines of the ``java`` processes it started
    (watched in ``/proc`` while it runs): what a JVM was really started with."""
    import os
    import subprocess
    import tempfile
    import time

    def descendants(root: int) -> set[int]:
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
        out, grew = {root}, True
        while grew:
            more = {p for p, pp in parents.items() if pp in out} - out
            out |= more
            grew = bool(more)
        return out - {root}

    seen: dict[int, str] = {}
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            for pid in descendants(proc.pid) - set(seen):
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if argv and argv[0].endswith(b"/java"):
                    seen[pid] = b" ".join(argv).decode(errors="replace")
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        log.seek(0)
        return code, log.read(), sorted(seen.values())
