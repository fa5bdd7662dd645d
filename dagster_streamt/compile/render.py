"""Render model SQL with Jinja2's sandbox; ``ref()``/``source()`` capture dependencies.

A model's SQL is rendered once per loaded project (:func:`render_once`): its relations are left as
placeholders that each reader binds to the names it needs (:func:`.compiled.bind`): lineage and
validation to the relation names, a run to its views. So what runs is the render lineage saw.

No regular expressions touch the SQL: Jinja parses the template. Templates made only of text and
constant-argument calls (``{{ ref("x") }}``, the common case) are evaluated straight from Jinja's
AST, which is about 4x cheaper than compiling a template; anything else is rendered in the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, nodes
from jinja2.sandbox import SandboxedEnvironment

from ..spec.envvars import EnvResolver, MissingVar, project_dotenv
from ..spec.project import Project
from .compiled import placeholder, relation_name

RelationFn = Callable[[str, str], str]  # (kind: "model" | "source", name) -> SQL text

# What partition variables render to when no run is in progress (validate, compile, lineage).
PARTITION_PLACEHOLDERS = {
    "partition_start": "TIMESTAMP '1970-01-01 00:00:00'",
    "partition_end": "TIMESTAMP '1970-01-02 00:00:00'",
    "partition_key": "'1970-01-01'",
    "partition_keys": "('1970-01-01')",
}


def partition_parameters(sql: str) -> str:
    """``sql`` rendered with the placeholders above, shown with its partition variables instead: a reader
    sees ``{{ partition_start }}``, which each run binds to its own window, not a 1970 date.

    >>> print(partition_parameters("SELECT * FROM t WHERE ts >= TIMESTAMP '1970-01-01 00:00:00' "
    ...                            "AND k IN ('1970-01-01')"))
    SELECT * FROM t WHERE ts >= {{ partition_start }} AND k IN {{ partition_keys }}
    """
    for name, value in sorted(PARTITION_PLACEHOLDERS.items(), key=lambda kv: -len(kv[1])):  # ('1970..') first
        sql = sql.replace(value, "{{ " + name + " }}")
    return sql


def default_relation(kind: str, name: str) -> str:
    return relation_name(name)


class RenderError(Exception):
    def __init__(self, message: str, lineno: int = 1) -> None:
        super().__init__(message)
        self.lineno = lineno


@dataclass
class RenderResult:
    sql: str
    refs: set[str] = field(default_factory=set)
    sources: set[str] = field(default_factory=set)
    missing_vars: list[str] = field(default_factory=list)
    unknown_vars: list[str] = field(default_factory=list)
    uses_partition: bool = False


_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


class _Ctx:
    """The functions a template sees; each call is recorded."""

    def __init__(self, model: str, variables: Mapping[str, Any], resolver: EnvResolver,
                 relation: RelationFn, partition: Mapping[str, str] | None) -> None:
        self.model = model
        self.variables = variables
        self.resolver = resolver
        self.relation = relation
        self.result = RenderResult(sql="")
        self.partition = dict(partition or PARTITION_PLACEHOLDERS)

    def ref(self, *args: Any) -> str:
        if not args or len(args) > 2:
            raise RenderError('ref() takes a model name: {{ ref("orders_clean") }}')
        name = str(args[-1])
        self.result.refs.add(name)
        return self.relation("model", name)

    def source(self, *args: Any) -> str:
        if not args or len(args) > 2:
            raise RenderError('source() takes a source name: {{ source("orders_raw") }}')
        name = str(args[-1])
        self.result.sources.add(name)
        return self.relation("source", name)

    def env_var(self, name: Any, default: Any = None) -> str:
        try:
            return self.resolver.env_var(str(name), default)
        except MissingVar as exc:
            self.result.missing_vars.append(exc.name)
            return ""

    def var(self, name: Any, default: Any = None) -> Any:
        key = str(name)
        if key in self.variables:
            return self.variables[key]
        if default is None:
            self.result.unknown_vars.append(key)
            return ""
        return default

    def namespace(self) -> dict[str, Any]:
        this = self.relation("model", self.model)
        # `model` is streamt's name for the tested relation in a test's custom SQL
        return {"ref": self.ref, "source": self.source, "env_var": self.env_var, "var": self.var, "this": this,
                "model": this, **self.partition}


def _unquote_partition_vars(tree: nodes.Template) -> None:
    """``'{{ partition_start }}'`` (the dbt habit of quoting) renders like ``{{ partition_start }}``: the
    variables already are complete SQL literals, so the quotes around them are dropped."""
    for output in tree.find_all(nodes.Output):
        parts = output.nodes
        for i in range(1, len(parts) - 1):
            before, var, after = parts[i - 1], parts[i], parts[i + 1]
            if isinstance(var, nodes.Name) and var.name in PARTITION_PLACEHOLDERS \
                    and isinstance(before, nodes.TemplateData) and isinstance(after, nodes.TemplateData) \
                    and before.data.endswith(("'", '"')) and after.data.startswith(before.data[-1]):
                before.data, after.data = before.data[:-1], after.data[1:]


def _fast_eval(tree: nodes.Template, ns: dict[str, Any]) -> str | None:
    """Evaluate text + constant calls directly; None when the template needs the full renderer."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], nodes.Output):
        return None if tree.body else ""
    parts: list[str] = []
    for node in tree.body[0].nodes:
        if isinstance(node, nodes.TemplateData):
            parts.append(node.data)
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name in ns \
                and not node.kwargs and node.dyn_args is None and node.dyn_kwargs is None \
                and all(isinstance(a, nodes.Const) for a in node.args) and callable(ns[node.node.name]):
            parts.append(str(ns[node.node.name](*(a.value for a in node.args if isinstance(a, nodes.Const)))))
        elif isinstance(node, nodes.Name) and node.name in ns and not callable(ns[node.name]):
            parts.append(str(ns[node.name]))
        else:
            return None
    return "".join(parts)


def render_sql(model: str, template: str, *, variables: Mapping[str, Any], resolver: EnvResolver,
               relation: RelationFn = default_relation,
               partition: Mapping[str, str] | None = None) -> RenderResult:
    """Render one model's SQL. Raises :class:`RenderError` with a template line on bad Jinja."""
    ctx = _Ctx(model, variables, resolver, relation, partition)
    ns = ctx.namespace()
    if "{" not in template:
        ctx.result.sql = template
        return ctx.result
    try:
        tree = _ENV.parse(template)
        ctx.result.uses_partition = any(n.name in PARTITION_PLACEHOLDERS for n in tree.find_all(nodes.Name))
        if ctx.result.uses_partition:
            _unquote_partition_vars(tree)
        fast = _fast_eval(tree, ns)
        ctx.result.sql = fast if fast is not None else _ENV.from_string(tree).render(**ns)
    except TemplateSyntaxError as exc:
        raise RenderError(f"template syntax error: {exc.message}", exc.lineno or 1) from None
    except RenderError:
        raise
    except TemplateError as exc:
        raise RenderError(f"template error: {exc.message or exc}", getattr(exc, "lineno", 1) or 1) from None
    except Exception as exc:  # a sandboxed template can raise anything (ZeroDivisionError, ...)
        raise RenderError(f"template failed: {type(exc).__name__}: {exc}") from None
    return ctx.result


Calls = tuple[tuple[str, str], ...]  # (kind, name) of each relation a template called, in call order


def render_once(project: Project, name: str, template: str, resolver: EnvResolver | None = None, *,
                again: bool = False) -> tuple[RenderResult, Calls]:
    """Model ``name``'s ``template`` rendered with the project's variables and every relation as a
    :func:`.compiled.placeholder`, with the relations it called; rendered once per project and template
    (a failed render is not kept: each caller sees its error). Partition variables render as
    :data:`PARTITION_PLACEHOLDERS` (a run renders a partitioned model for its window itself).
    ``again``: render even when kept, so ``resolver`` sees every variable it reads (the compiler's tracks
    secrets and the environment the load cache depends on), and keep that render."""
    known = project.derived.get(("render", name))
    if known is not None and known[0] == template and not again:
        return known[1]
    done = render_calls(name, template, variables=project.vars,
                        resolver=resolver or EnvResolver(project_dotenv(project.root, project.env)))
    project.derived[("render", name)] = (template, done)
    return done


def render_calls(name: str, template: str, *, variables: Mapping[str, Any], resolver: EnvResolver,
                 partition: Mapping[str, str] | None = None) -> tuple[RenderResult, Calls]:
    """:func:`render_sql` with every relation as a placeholder, and the relations it called."""
    calls: dict[tuple[str, str], None] = {}

    def relation(kind: str, ref: str) -> str:
        calls.setdefault((kind, ref), None)
        return placeholder(kind, ref)

    result = render_sql(name, template, variables=variables, resolver=resolver, relation=relation,
                        partition=partition)
    return result, tuple(calls)
