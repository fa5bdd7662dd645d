"""Definition-time validation of data tests: no Spark, no data read, every problem located in YAML.

Catches what would otherwise fail (or, worse, silently pass) at run time: unknown assertions and
parameters, streaming-only rules in batch tests, continuous tests on batch models, relationships to
unknown models, and schema tests whose columns or types disagree with what the project declares.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..checks import codes as _codes  # noqa: F401 - registers the TST codes
from ..checks.assertions import parse_assertions
from ..checks.kinds import KINDS
from ..checks.params import AcceptedTypes, CustomSql, Expression, ExpressionIsTrue, Relationships
from ..checks.parsed import ParsedAssertion
from ..checks.results import target_of
from ..compile.compiled import CompiledProject
from ..compile.render import RenderError, render_sql
from ..graph.graph import Graph, node_id
from ..spec.envvars import EnvResolver
from ..spec.errors import Diagnostics, Severity
from ..spec.models import Column, Test
from ..spec.project import Project
from ..spec.suggest import did_you_mean
from ..sql import parse_expression
from ..sql.spark_types import is_known_type, normalize_type, type_matches

_ISSUE_CODES = {"unknown_assertion": "TST001", "unknown_key": "TST002", "missing_key": "TST003", "bad_value": "TST004"}
_COLUMN_KEYS = ("columns", "column", "key", "types")


@dataclass(frozen=True)
class Schema:
    """What is statically known of a model's or source's output: names, and types where declared."""

    columns: tuple[str, ...] | None  # None: unknown (SELECT * with no declared columns)
    types: dict[str, str]  # lower-cased name -> declared type


def _declared(columns: Iterable[Column]) -> Schema | None:
    cols = list(columns)
    if not cols:
        return None
    return Schema(tuple(c.name for c in cols), {c.name.lower(): c.type for c in cols if c.type})


def target_schema(project: Project, compiled: CompiledProject, kind: str, name: str,
                  inferred: dict[tuple[str, str], str] | None = None) -> Schema:
    if kind == "source":
        source = project.sources.get(name)
        return (_declared(source.columns) if source else None) or Schema(None, {})
    model = project.models.get(name)
    declared = _declared(model.columns) if model else None
    if declared:
        return declared
    cm = compiled.models.get(name)
    columns = cm.output_columns if cm else None
    types = {c: inferred[(name, c)] for c in columns or () if inferred and (name, c) in inferred}
    return Schema(columns, types)


def _is_stream(compiled: CompiledProject, name: str) -> bool:
    """A stream model, or a sink that reads one (sinks stream when their input does)."""
    cm = compiled.models.get(name)
    if cm is None:
        return False
    if cm.materialized == "stream":
        return True
    return cm.materialized == "sink" and any(
        (up := compiled.models.get(m)) is not None and up.materialized == "stream" for m in cm.upstream_models)


class _TestChecker:
    def __init__(self, project: Project, compiled: CompiledProject, graph: Graph, test: Test, diags: Diagnostics,
                 inferred: dict[tuple[str, str], str] | None = None):
        self.project, self.compiled, self.graph, self.test, self.diags = project, compiled, graph, test, diags
        self.inferred = inferred
        self.kind, self.name = target_of(test)

    def add(self, code: str, message: str, at: tuple[str | int, ...], hint: str,
            severity: Severity = Severity.ERROR) -> None:
        file, line = self.project.where("test", self.test.name, *at)
        self.diags.add(code, f"test {self.test.name!r}: {message}", file=file, line=line, hint=hint,
                       severity=severity)

    def run(self) -> None:
        parsed, issues = parse_assertions(self.test)
        for issue in issues:
            at: tuple[str | int, ...] = ("assertions", issue.index)
            if issue.kind != "unknown_assertion":
                at = (*at, issue.written, *issue.key)
            self.add(_ISSUE_CODES[issue.kind], issue.message, at, issue.hint or "see the assertion reference")
        for a in parsed:
            self.check_kind(a)
            if isinstance(a.params, Relationships):
                self.check_relationship(a, a.params)
            if isinstance(a.params, CustomSql):
                self.check_custom_sql(a, a.params)
            if isinstance(a.params, ExpressionIsTrue):
                self.check_parses(a, "expression", f"SELECT 1 WHERE {a.params.expression}")
            if isinstance(a.params, Expression):
                self.check_parses(a, "sql", f"SELECT 1 WHERE {a.params.sql}")

        if node_id(self.kind, self.name) not in self.graph.nodes:
            return  # REF003 (unknown test target) is reported by the graph builder
        if self.test.type == "continuous" and not (self.kind == "model" and _is_stream(self.compiled, self.name)):
            self.add("TST006", f"type continuous runs inside a streaming query, but {self.kind} {self.name!r} is "
                     "not a stream", ("type",),
                     "target a `materialized: stream` model (or a sink reading one), or use `type: sample`")
        self.check_schema(parsed)

    def at(self, a: ParsedAssertion, *key: str | int) -> tuple[str | int, ...]:
        return ("assertions", a.index, a.written, *key)

    def check_kind(self, a: ParsedAssertion) -> None:
        kind = KINDS[a.name]
        if kind.continuous_only and self.test.type != "continuous":
            self.add("TST005", f"{a.written} needs a running stream, but the test is type {self.test.type}",
                     self.at(a), f"set `type: continuous` on the test, or move {a.written} to a continuous test")
        if kind.needs_rows and self.test.type == "schema":
            self.add("TST014", f"{a.written} needs data, but a schema test reads none", self.at(a),
                     "move it to a `type: sample` test")

    def check_relationship(self, a: ParsedAssertion, p: Relationships) -> None:
        kind, name = p.target
        names = self.project.models if kind == "model" else self.project.sources
        if name not in names:
            key = "to" if p.to is not None else "ref_model"
            other = self.project.sources if kind == "model" else self.project.models
            extra = f" (that name is a {'source' if kind == 'model' else 'model'})" if name in other else ""
            self.add("TST007", f"{a.written} points to unknown {kind} {name!r}{extra}", self.at(a, key),
                     did_you_mean(name, names) or f"name a {kind} defined in this project")
            return
        schema = target_schema(self.project, self.compiled, kind, name, self.inferred)
        if schema.columns is not None and p.target_field.lower() not in {c.lower() for c in schema.columns}:
            key = "field" if p.field is not None else "ref_key"
            self.add("TST008", f"{a.written}: {kind} {name!r} has no column {p.target_field!r}", self.at(a, key),
                     did_you_mean(p.target_field, schema.columns) or f"columns: {', '.join(schema.columns)}")

    def check_custom_sql(self, a: ParsedAssertion, p: CustomSql) -> None:
        if p.sql is None:  # params hold exactly one of `sql` and `where`
            self.check_parses(a, "where", f"SELECT 1 WHERE {p.where}")
            return
        at = self.at(a, "sql")
        try:
            rendered = render_sql("__streamt_this__", p.sql, variables=self.project.vars, resolver=EnvResolver())
        except RenderError as exc:
            self.add("TST011", f"{a.written}.sql: {exc}", at,
                     'use {{ ref("model") }}, {{ source("name") }} or {{ this }}')
            return
        for var in sorted({*rendered.unknown_vars, *rendered.missing_vars}):
            self.add("TST011", f"{a.written}.sql uses unknown variable {var!r}", at,
                     "define it under `vars:` or set the environment variable")
        for ref in sorted(rendered.refs - set(self.project.models)):
            self.add("TST011", f"{a.written}.sql references unknown model {ref!r}", at,
                     did_you_mean(ref, self.project.models) or "define the model or fix the name")
        for src in sorted(rendered.sources - set(self.project.sources)):
            self.add("TST011", f"{a.written}.sql references unknown source {src!r}", at,
                     did_you_mean(src, self.project.sources) or "declare the source or fix the name")
        self.check_parses(a, "sql", rendered.sql)

    def check_parses(self, a: ParsedAssertion, key: str, query: str) -> None:
        """sqlglot rejects some valid Spark SQL, so a parse failure is only a warning."""
        error = parse_expression(query)
        if error is not None:
            self.add("TST012", f"{a.written}.{key} does not parse: {error}", self.at(a, key),
                     "check the SQL; if Spark accepts it, this warning can be ignored", Severity.WARNING)

    def check_schema(self, parsed: list[ParsedAssertion]) -> None:
        schema = target_schema(self.project, self.compiled, self.kind, self.name, self.inferred)
        if schema.columns is None:
            if self.test.type == "schema":
                self.add("TST010", f"the columns of {self.kind} {self.name!r} are not known statically (SELECT * "
                         "and no declared `columns:`)", ("model" if self.kind == "model" else "source",),
                         f"declare `columns:` on {self.kind} {self.name!r}; until then the test checks the "
                         "schema when the model runs", Severity.WARNING)
            return
        known = {c.lower() for c in schema.columns}
        for a in parsed:
            raw = self.test.assertions[a.index][a.written] or {}
            key = next((k for k in _COLUMN_KEYS if k in raw), "")
            for col in a.params.columns_used():
                if col.split(".", 1)[0].lower() not in known:
                    self.add("TST008", f"{a.written}: {self.kind} {self.name!r} has no column {col!r}",
                             self.at(a, key) if key else self.at(a),
                             did_you_mean(col, schema.columns) or f"columns: {', '.join(schema.columns)}")
            if isinstance(a.params, AcceptedTypes):
                self.check_types(a, a.params, schema)

    def check_types(self, a: ParsedAssertion, p: AcceptedTypes, schema: Schema) -> None:
        for col, accepted in p.types.items():
            options = [accepted] if isinstance(accepted, str) else list(accepted)
            at = self.at(a, "types", col)
            unknown = [t for t in options if not is_known_type(t)]
            if unknown:
                self.add("TST013", f"accepted_types: {unknown[0]!r} is not a Spark type", at,
                         did_you_mean(unknown[0], ["string", "int", "bigint", "double", "boolean", "timestamp",
                                                   "date", "decimal", "number"]) or "use a Spark type name")
                continue
            declared = schema.types.get(col.lower())
            if declared is None:
                if self.test.type == "schema" and col.lower() in {c.lower() for c in schema.columns or ()}:
                    self.add("TST010", f"accepted_types: the type of {col!r} is not declared", at,
                             f"declare `type:` for column {col!r}; until then it is checked when the model runs",
                             Severity.WARNING)
            elif not any(type_matches(t, declared) for t in options):
                self.add("TST009", f"accepted_types: {col!r} is declared {normalize_type(declared) or declared}, "
                         f"not {' or '.join(options)}", at,
                         f"accept {normalize_type(declared) or declared!r} or fix the column's declared `type:`")


def check_tests(project: Project, compiled: CompiledProject, graph: Graph,
                inferred: dict[tuple[str, str], str] | None = None) -> Diagnostics:
    """Validate every data test of ``project``; returns diagnostics (codes TST001-TST014).
    ``inferred`` adds column types carried from declared columns through column lineage."""
    diags = Diagnostics()
    for name in sorted(project.tests):
        _TestChecker(project, compiled, graph, project.tests[name], diags, inferred).run()
    return diags


__all__ = ["Schema", "check_tests", "target_schema"]
