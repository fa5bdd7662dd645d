"""Markdown the user guide (``docs/``) takes from the code, so it cannot drift from it.

``docs/hooks.py`` (an MkDocs hook) replaces each ``<!-- generated:NAME -->`` marker of a page with
``GENERATORS[NAME]()`` while the site builds:

- ``streamt-keys``: what each streamt key does on Spark (``spec/compat.py``, the data behind
  ``streamt validate``'s compatibility notes);
- ``streamt-projects``: the streamt projects the compatibility tests load (``tests/compat/``);
- ``cli``: every ``streamt`` command, its usage, help and options (the click commands themselves);
- ``yaml``: every key of a project's YAML files, its type and default (the pydantic spec);
- ``error-codes`` and ``assertions``: the diagnostic code table and the assertion registry.

Output is deterministic: commands, keys and projects are sorted.

Examples:
    >>> from dagster_streamt.guide import expand
    >>> "| `runtime.flink` |" in expand("<!-- generated:streamt-keys -->")
    True
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

MARKER = re.compile(r"<!-- generated:([a-z-]+) -->")
COMPAT_PROJECTS = Path(__file__).resolve().parents[1] / "tests" / "compat" / "streamt_projects"


def streamt_keys() -> str:
    """The "coming from streamt" table: every streamt key and what it does on Spark."""
    from .spec.compat import markdown_table

    return markdown_table()


def streamt_projects() -> str:
    """The streamt projects ``tests/compat/test_streamt_projects.py`` validates, loads and runs."""
    if not COMPAT_PROJECTS.is_dir():  # an installed package without the repository's tests
        return "(the compatibility projects live in the repository's `tests/compat/streamt_projects/`)"
    names = sorted(p.name for p in COMPAT_PROJECTS.iterdir() if p.is_dir() and not p.name.startswith("."))
    return "\n".join(f"- `{name}`" for name in names)


# -- the CLI -----------------------------------------------------------------------------------------
def _commands(group: click.Group, prefix: str) -> Iterator[tuple[str, click.Command]]:
    for name in sorted(group.commands):
        command = group.commands[name]
        yield f"{prefix} {name}", command
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix} {name}")


def _option_row(param: click.Parameter) -> str:
    names = ", ".join(f"`{n}`" for n in (*param.opts, *param.secondary_opts))
    help_text = " ".join(((getattr(param, "help", None) or "")).split())
    kind = param.type.name.upper() if not getattr(param, "is_flag", False) else "flag"
    if isinstance(param.type, click.Choice):
        kind = " \\| ".join(str(c) for c in param.type.choices)
    default = param.default if param.default not in (None, False, ()) and not callable(param.default) else ""
    default = "" if type(default).__name__ == "Sentinel" else default  # click's UNSET: no default
    extra = f" (default `{default}`)" if default != "" else ""
    escaped = help_text.replace("|", "\\|")
    return f"| {names} | {kind} | {escaped}{extra} |"


def cli_reference() -> str:
    """Every ``streamt`` command: usage, help text and an options table, from the click commands."""
    from .cli.main import cli

    out: list[str] = []
    for path, command in _commands(cli, "streamt"):
        ctx = click.Context(command, info_name=path)
        out += [f"### `{path}`", "", "```text", command.get_usage(ctx), "```", ""]
        if command.help:
            out += [line.rstrip() for line in inspect.cleandoc(command.help.replace("\b\n", "")).splitlines()] + [""]
        options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        if arguments:
            out += ["Arguments: " + ", ".join(f"`{(a.human_readable_name or '').upper()}`" for a in arguments), ""]
        if options:
            out += ["| option | value | meaning |", "|---|---|---|", *map(_option_row, options), ""]
    return "\n".join(out).rstrip() + "\n"


# -- the YAML spec ------------------------------------------------------------------------------------
def _type_name(annotation: Any) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(_type_name(a) for a in args if a is not type(None)))
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (list, tuple, set):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"map of {_type_name(args[1])}" if len(args) == 2 else "map"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    if annotation is Any:
        return "any"
    return getattr(annotation, "__name__", str(annotation)).replace("NoneType", "null")


def _models_in(annotation: Any) -> list[tuple[type[BaseModel], bool]]:
    """The spec models an annotation holds, and whether as list items."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, False)]
    if origin in (list, tuple, set) and args:
        return [(m, True) for m, _ in _models_in(args[0])]
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        return [m for a in args for m in _models_in(a)]
    return []


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default
    return "" if value is PydanticUndefined or value is None or isinstance(value, BaseModel) else f"`{value}`"


def _rows(model: type[BaseModel], path: str, seen: tuple[type[BaseModel], ...]) -> Iterator[tuple[str, str, str]]:
    for name, field in model.model_fields.items():
        key = field.alias or name
        here = f"{path}.{key}" if path else key
        yield here, _type_name(field.annotation), _default(field)
        for sub, is_list in _models_in(field.annotation):
            if sub not in seen:
                yield from _rows(sub, f"{here}[]" if is_list else here, (*seen, sub))


def yaml_reference() -> str:
    """Every key of ``stream_project.yml``, the entity files and environment files, from the spec."""
    from .spec.compat import STREAMT_KEYS
    from .spec.governance import Defaults, EnvironmentInfo, Rules, Safety
    from .spec.models import SECTION_MODELS, ProjectInfo, Runtime

    meaning = {k.pattern: (k.text if k.effect == "mapped" else f"no effect on Spark: {k.text}") for k in STREAMT_KEYS}
    roots: list[tuple[str, type[BaseModel], str]] = [
        ("project", ProjectInfo, "`stream_project.yml`"), ("runtime", Runtime, "`stream_project.yml`, environments"),
        ("defaults", Defaults, "`stream_project.yml`, environments"),
        ("rules", Rules, "`stream_project.yml`, environments"),
        ("environment", EnvironmentInfo, "`environments/<env>.yml`"), ("safety", Safety, "`environments/<env>.yml`"),
        *((f"{section}[]", model, f"`{section}/*.yml` or `stream_project.yml`")
          for section, model in sorted(SECTION_MODELS.items())),
    ]
    out: list[str] = []
    for root, model, where in sorted(roots):
        out += [f"### `{root.removesuffix('[]')}`", "", f"In {where}.", "",
                "| key | type | default | note |", "|---|---|---|---|"]
        for key, kind, default in sorted(_rows(model, root, (model,))):
            note = meaning.get(key, "")
            out.append(f"| `{key}` | {kind} | {default} | {note} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def error_codes() -> str:
    """Every diagnostic code and its title (``spec/errors.py`` and the data tests' ``checks/codes.py``)."""
    from .checks.codes import TEST_CODES
    from .spec.errors import CODES

    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| `{code}` | {title} |" for code, title in sorted({**CODES, **TEST_CODES}.items())]
    return "\n".join(rows)


def assertion_kinds() -> str:
    """Every registered assertion kind: its aliases, its parameters and what it is judged from."""
    from .checks.kinds import KINDS

    rows = ["| assertion | aliases | parameters | judged from |", "|---|---|---|---|"]
    for name, kind in sorted(KINDS.items()):
        params = ", ".join(f"`{f.alias or n}`" for n, f in kind.params.model_fields.items())
        aliases = ", ".join(f"`{a}`" for a in sorted(kind.aliases))
        how = "the stream's progress (continuous tests only)" if kind.continuous_only else kind.evaluated_from
        rows.append(f"| `{name}` | {aliases} | {params} | {how} |")
    return "\n".join(rows)


GENERATORS: dict[str, Callable[[], str]] = {
    "assertions": assertion_kinds, "cli": cli_reference, "error-codes": error_codes,
    "streamt-keys": streamt_keys, "streamt-projects": streamt_projects, "yaml": yaml_reference,
}


def expand(markdown: str) -> str:
    """Replace every ``<!-- generated:NAME -->`` marker with its generated Markdown.

    Args:
        markdown: A page's Markdown.

    Returns:
        The page with each marker replaced; an unknown marker name raises ``KeyError``.
    """
    return MARKER.sub(lambda m: GENERATORS[m.group(1)](), markdown)
