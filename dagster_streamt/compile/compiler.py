"""Compile every model: render its SQL, check refs and sources, parse with sqlglot.

All problems are collected as diagnostics that point at the YAML line of the SQL (template and
parse errors are offset into the SQL block), never only the first one.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from ..spec.envvars import EnvResolver, project_dotenv
from ..spec.errors import Diagnostics, Severity
from ..spec.model import DESCRIPTIVE_KEYS
from ..spec.models import Model
from ..spec.project import Project
from ..spec.suggest import did_you_mean
from .compiled import CompiledModel, CompiledProject, bind, relation_name
from .infer import infer_materializations
from .render import RenderError, render_once
from .summary import ParseSummary, stream_sql, summarize


def _line_in(template: str, needle: str) -> int:
    """1-based line of the first line mentioning ``needle`` (for locating a bad ref)."""
    for i, line in enumerate(template.splitlines(), start=1):
        if f'"{needle}"' in line or f"'{needle}'" in line:
            return i
    return 1


class _Compiler:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.diags = Diagnostics()
        self.resolver = EnvResolver(project_dotenv(project.root, project.env))
        self.model_names = set(project.models)
        self.source_names = set(project.sources)

    def sql_diag(self, name: str, offset: int, code: str, message: str, hint: str,
                 severity: Severity = Severity.ERROR) -> None:
        """A diagnostic at line ``offset`` (1-based) of model ``name``'s SQL, located in its YAML file."""
        loc = self.project.location("model", name)
        file, line = (loc.file, loc.value_line_of("sql") + max(offset, 1) - 1) if loc is not None else ("", 0)
        self.diags.add(code, message, file=file, line=line, hint=hint, severity=severity)

    def compile_model(self, model: Model) -> CompiledModel:
        name = model.name
        file, line = self.project.where("model", name)
        mat = model.materialized or "table"  # provisional when unset: inferred once every model is parsed
        template = model.sql_template
        if template is None:
            self.diags.add("SQL004", f"model {name!r} has no `sql:`", file=file, line=line,
                           hint="add `sql: SELECT ... FROM {{ ref(\"...\") }}` (a sink may use `from: model`)")
            return CompiledModel(name=name, materialized=mat, sql=None)
        if model.sql is None:
            return self._compile_from(model, template, mat)
        try:
            rendered, calls = render_once(self.project, name, template, self.resolver, again=True)
        except RenderError as exc:
            self.sql_diag(name, exc.lineno, "SQL002", f"model {name!r}: {exc}",
                          'use {{ ref("model") }}, {{ source("name") }}, {{ env_var("VAR") }}, {{ var("x") }}')
            return CompiledModel(name=name, materialized=mat, sql=None)
        for var in sorted(set(rendered.missing_vars)):
            self.sql_diag(name, _line_in(model.sql, var), "STR030",
                          f"model {name!r}: environment variable {var} is not set",
                          f'export {var}, add it to .env, or give a default: env_var("{var}", "value")')
        for var in sorted(set(rendered.unknown_vars)):
            hint = did_you_mean(var, self.project.vars) or f"define it under `vars:` in the root file: {{{var}: ...}}"
            self.sql_diag(name, _line_in(model.sql, var), "STR031",
                          f"model {name!r}: unknown project variable {var!r}", hint)
        for ref in sorted(rendered.refs - self.model_names):
            extra = " (that name is a source: use source())" if ref in self.source_names else ""
            hint = did_you_mean(ref, self.model_names) or f"define a model named {ref!r}{extra}"
            self.sql_diag(name, _line_in(model.sql, ref), "REF001",
                          f"model {name!r} references unknown model {ref!r}{extra}", hint)
        for src in sorted(rendered.sources - self.source_names):
            extra = " (that name is a model: use ref())" if src in self.model_names else ""
            hint = did_you_mean(src, self.source_names) or f"declare a source named {src!r}{extra}"
            self.sql_diag(name, _line_in(model.sql, src), "REF002",
                          f"model {name!r} references unknown source {src!r}{extra}", hint)
        if rendered.uses_partition and model.partitioned_by is None:
            first = next((i for i, text in enumerate(model.sql.splitlines(), 1) if "partition_" in text), 1)
            self.sql_diag(name, first, "STR060", f"model {name!r} uses partition variables but has no `partitioned_by`",
                          "add `partitioned_by: {column: ..., granularity: day, start: 2026-01-01}` to the model, or "
                          "remove {{ partition_start }} / {{ partition_end }}")
        if not rendered.refs and not rendered.sources and mat != "sink":
            self.diags.add("REF007", f"model {name!r} reads no source or model, so it has no lineage",
                           file=file, line=line, severity=Severity.WARNING,
                           hint='read inputs with {{ source("...") }} or {{ ref("...") }}')
        sql = bind(rendered.sql, calls, lambda kind, ref: relation_name(ref))
        return CompiledModel(
            name=name, materialized=mat, sql=sql.strip(), refs=tuple(sorted(rendered.refs)),
            sources=tuple(sorted(rendered.sources)), from_=model.from_model, sql_hash=_hash(sql),
        )

    def _compile_from(self, model: Model, template: str, mat: str) -> CompiledModel:
        """A sink or view written as ``from:`` without ``sql:``: a pass-through of its inputs."""
        name = model.name
        file, line = self.project.where("model", name, "from")
        for kind, target in model.from_inputs:
            names = self.model_names if kind == "model" else self.source_names
            if target not in names:
                hint = did_you_mean(target, names) or f"name a {kind} defined in this project"
                self.diags.add("REF005", f"model {name!r} reads `from` unknown {kind} {target!r}", file=file,
                               line=line, hint=hint)
        rendered, calls = render_once(self.project, name, template, self.resolver, again=True)
        sql = bind(rendered.sql, calls, lambda kind, ref: relation_name(ref))
        return CompiledModel(
            name=name, materialized=mat, sql=sql.strip(), refs=tuple(sorted(rendered.refs & self.model_names)),
            sources=tuple(sorted(rendered.sources & self.source_names)), from_=model.from_model,
            sql_hash=_hash(sql))

    def default_watermark(self, cm: CompiledModel) -> None:
        """A stream window (or interval join) whose inputs declare no event time gets a default watermark
        on Spark: say so, since it decides when windows are written and which late rows are dropped."""
        if cm.materialized != "stream" or not cm.time_columns:
            return
        p = self.project
        timed = [s for s in cm.sources if s in p.sources and p.sources[s].event_time is not None]
        timed += [m for m in cm.refs if m in p.event_columns]
        if timed:
            return
        file, line = p.where("model", cm.name)
        columns = ", ".join(f"`{c.split('.')[-1]}`" for c in cm.time_columns)
        self.diags.add("STR045", f"model {cm.name!r}: no input declares an event time, so Spark watermarks "
                       f"{columns} with streamt's default bound of 5 seconds", file=file, line=line,
                       severity=Severity.NOTE, hint="declare `event_time: {column: ..., watermark: ...}` on the "
                       "source to choose how late an event may be")

    def apply_parse(self, cm: CompiledModel, summary: ParseSummary) -> CompiledModel:
        if summary.error is not None:
            code = "SQL005" if summary.problems else "SQL001"
            what = "" if summary.problems else "SQL syntax error: "
            hint = summary.problems[0].hint if summary.problems else \
                "fix the SQL (Spark or Flink SQL); `streamt compile` shows the rendered SQL"
            self.sql_diag(cm.name, summary.line, code, f"model {cm.name!r}: {what}{summary.error}", hint)
        else:
            for problem in summary.problems:
                self.sql_diag(cm.name, problem.line, "SQL005",
                              f"model {cm.name!r}: {problem.construct} has no Spark equivalent", problem.hint)
        for note in summary.notes:
            self.sql_diag(cm.name, 1, "SQL006", f"model {cm.name!r}: {note}",
                          "nothing to do if the other side changes slowly; `streamt compile` shows the Spark SQL",
                          Severity.NOTE)
        return replace(cm, output_columns=summary.columns, features=summary.features, spark_sql=summary.spark_sql,
                       time_columns=summary.time_columns)


def config_hash(model: Model) -> str:
    config = model.model_dump(mode="json", by_alias=True, exclude=set(DESCRIPTIVE_KEYS))
    return _hash(json.dumps(config, sort_keys=True, default=str))


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


PARALLEL_MIN = 1000  # below this, a process pool costs more than it saves


def _parse_all(sqls: dict[str, str], cache: dict[str, ParseSummary]) -> dict[str, ParseSummary]:
    """Summaries by SQL hash: from the cache, else parsed (on every core for big projects)."""
    todo = sorted(h for h in sqls if h not in cache)
    out = {h: cache[h] for h in sqls if h in cache}
    workers = min(os.cpu_count() or 1, 8)
    if len(todo) >= PARALLEL_MIN and workers > 1 and sys.platform == "linux":
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:  # four chunks a worker
            results = pool.map(summarize, [sqls[h] for h in todo], chunksize=len(todo) // (workers * 4) + 1)
            out.update(zip(todo, results, strict=True))
    else:
        for h in todo:
            out[h] = summarize(sqls[h])
    return out


def compile_project(project: Project, parse_cache: dict[str, ParseSummary] | None = None
                    ) -> tuple[CompiledProject, Diagnostics]:
    """Render every model, then parse every distinct SQL once. ``parse_cache`` (SQL hash -> summary)
    is read and updated, so an edit to one model re-parses only that model."""
    compiler = _Compiler(project)
    models = {name: compiler.compile_model(m) for name, m in project.models.items() if m.enabled}
    sqls = {cm.sql_hash: cm.sql for cm in models.values() if cm.sql}
    summaries = _parse_all(sqls, parse_cache if parse_cache is not None else {})
    if parse_cache is not None:
        parse_cache.clear()
        parse_cache.update(summaries)
    models = {n: (compiler.apply_parse(cm, summaries[cm.sql_hash]) if cm.sql else cm) for n, cm in models.items()}
    inferred = infer_materializations(project, CompiledProject(models=models))
    for cm in inferred.models.values():
        compiler.default_watermark(cm)
    models = {n: replace(cm, config_hash=config_hash(project.models[n]), spark_sql=stream_sql(cm))
              for n, cm in inferred.models.items()}
    project.derived.update({("features", n): (template, cm.features) for n, cm in models.items()
                            if cm.sql is not None and (template := project.models[n].sql_template) is not None})
    project.secrets |= compiler.resolver.secrets
    project.env_used.update(compiler.resolver.used)
    return CompiledProject(models=models), compiler.diags
