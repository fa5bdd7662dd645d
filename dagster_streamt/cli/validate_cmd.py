"""``streamt validate``: every error and warning, a summary line, exit 1 on errors."""

from __future__ import annotations

import json
import sys
from collections import Counter

import click

from ..spec.envvars import Redactor
from ..spec.errors import ProjectError
from .common import EXIT_INVALID, EXIT_OK, print_diagnostics, project_command


@project_command("validate")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def validate(project_dir: str, env: str | None, fmt: str) -> None:
    """Check the project: schema, references, SQL, cycles, schedules and governance rules."""
    from ..api import load

    try:
        loaded = load(project_dir, env)
        diags, red, project = loaded.diagnostics, Redactor(loaded.project.secrets), loaded.project
    except ProjectError as exc:
        diags, red, project = exc.diagnostics, Redactor(), None
    errors = [d for d in diags if d.is_error]
    warnings = [d for d in diags if d.severity.value == "warning"]
    if fmt == "json":
        doc = {"valid": not errors, "errors": len(errors), "warnings": len(warnings),
               "diagnostics": [red.value(d.to_dict()) for d in diags]}
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
        sys.exit(EXIT_INVALID if errors else EXIT_OK)
    if project is not None:
        counts = (f"{len(project.sources)} sources, {len(project.models)} models, {len(project.tests)} tests, "
                  f"{len(project.exposures)} exposures, {len(project.schedules)} schedule(s)")
        click.echo(f"Project {project.name} ({project.info.version}){' env ' + project.env if project.env else ''}: "
                   f"{counts}")
        if project.inferred:
            kinds = Counter(project.models[name].materialized or "?" for name in project.inferred)
            summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            click.echo(f"Materializations inferred from the SQL: {summary} (`streamt compile` lists each)")
    print_diagnostics(diags, red)
    summary = f"{len(errors)} error(s), {len(warnings)} warning(s)"
    if errors:
        click.echo(click.style(f"✗ invalid: {summary}", fg="red", bold=True))
        sys.exit(EXIT_INVALID)
    click.echo(click.style(f"✓ valid: {summary}", fg="green", bold=True))
