"""Options and helpers shared by every ``streamt`` command."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from ..spec.envvars import Redactor
from ..spec.errors import Diagnostic, ProjectError, Severity

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def project_options(fn: F) -> F:
    """Every command takes ``-p/--project-dir`` and ``-e/--env``."""
    # STREAMT_ENV is read by the loader, not here: a project without environments/ ignores it (as streamt does)
    fn = click.option("-e", "--env", "env", default=None,
                      help="Environment overlay: environments/<env>.yml (or STREAMT_ENV).")(fn)
    fn = click.option("-p", "--project-dir", "project_dir", default=".", show_default=True,
                      type=click.Path(file_okay=False, path_type=str),
                      help="Project folder holding stream_project.yml.")(fn)
    return fn


def project_command(name: str, group: click.Group | None = None) -> Callable[[Callable[..., Any]], click.Command]:
    """``@click.command(name)`` (or ``@group.command(name)``), ``@project_options`` (listed first) and
    ``@guarded`` in one decorator."""

    def decorate(fn: Callable[..., Any]) -> click.Command:
        return (group.command if group else click.command)(name)(project_options(guarded(fn)))

    return decorate


def fail(message: str) -> NoReturn:
    """``error: message`` in red on stderr, then exit 1."""
    click.echo(click.style(f"error: {message}", fg="red"), err=True)
    sys.exit(EXIT_INVALID)


def select_or_usage(graph: Any, selection: str, types: tuple[str, ...] | None = ("model",)) -> list[str]:
    """The node ids ``selection`` names; a bad selection is a usage error (exit 2)."""
    from ..graph.select import SelectionError, select

    try:
        return select(graph, selection, types)
    except SelectionError as exc:
        raise click.UsageError(str(exc)) from None


def cell(value: int | None) -> str:
    """A count with thousands separators for a table cell; ``-`` when unknown."""
    return "-" if value is None else f"{value:,}"


def print_diagnostics(diags: list[Diagnostic], redactor: Redactor | None = None, *, notes: bool = True) -> None:
    red = redactor or Redactor()
    colors = {"error": "red", "warning": "yellow", "note": "cyan"}
    for d in diags:
        if d.severity is Severity.NOTE and not notes:
            continue
        where = f"{d.file}:{d.line}" if d.line else d.file
        head = click.style(f"{d.severity.value} {d.code}", fg=colors[d.severity.value], bold=True)
        click.echo(f"{where}: {head}: {red.text(d.message)}")
        if d.hint:
            click.echo(f"    fix: {red.text(d.hint)}")


def load_or_exit(project_dir: str, env: str | None, *, allow_errors: bool = False) -> Any:
    """Load the project; on errors print them all and exit 1 (unless ``allow_errors``)."""
    from ..api import load

    try:
        loaded = load(project_dir, env)
    except ProjectError as exc:
        print_diagnostics(exc.diagnostics)
        click.echo(click.style(f"✗ {len([d for d in exc.diagnostics if d.is_error])} error(s)", fg="red"))
        sys.exit(EXIT_INVALID)
    if loaded.errors and not allow_errors:
        print_diagnostics(loaded.diagnostics, Redactor(loaded.project.secrets), notes=False)
        click.echo(click.style(f"✗ {len(loaded.errors)} error(s): fix them first (streamt validate)", fg="red"))
        sys.exit(EXIT_INVALID)
    if loaded.findings:
        click.echo(click.style(f"! {len(loaded.findings)} governance finding(s): see `streamt validate`",
                               fg="yellow"), err=True)
    return loaded


def graph_or_exit(project_dir: str, env: str | None) -> Any:
    """The project graph only (fast path for lineage); on errors, print them all and exit 1."""
    from ..api import load_graph

    try:
        return load_graph(project_dir, env)
    except ProjectError as exc:
        print_diagnostics(exc.diagnostics, notes=False)
        errors = [d for d in exc.diagnostics if d.is_error]
        click.echo(click.style(f"✗ {len(errors)} error(s): fix them first (streamt validate)", fg="red"))
        sys.exit(EXIT_INVALID)


def guarded(fn: F) -> F:
    """Turn unexpected exceptions into a one-line message instead of a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            click.echo(click.style(f"error: {type(exc).__name__}: {exc}", fg="red"), err=True)
            click.echo("This is a bug in dagster-streamt if your input was valid; set STREAMT_DEBUG=1 "
                       "for the traceback.", err=True)
            import os

            if os.environ.get("STREAMT_DEBUG"):
                raise
            sys.exit(EXIT_INVALID)

    return wrapper  # type: ignore[return-value]
