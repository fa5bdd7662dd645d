"""``streamt init``: scaffold a runnable project (as streamt's own ``init`` does for its users)."""

from __future__ import annotations

import re
import sys
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import click

from .common import EXIT_INVALID, guarded

PLACEHOLDER = "__PROJECT_NAME__"
# package data keeps no dotfiles reliably: a template file may be stored under another name
RENAMED = {"gitignore": ".gitignore"}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _template() -> dict[str, bytes]:
    """Relative path -> content of every file of the packaged template, sorted."""
    out: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.name == "__pycache__":
                continue
            rel = f"{prefix}{RENAMED.get(child.name, child.name)}"
            if child.is_dir():
                walk(child, rel + "/")
            else:
                out[rel] = child.read_bytes()

    walk(files("dagster_streamt.cli") / "init_template", "")
    return dict(sorted(out.items()))


def _name_for(folder: Path) -> str:
    """A project name from a folder name: letters, digits and underscores, starting with a letter."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", folder.name).strip("_")
    return name if name and name[0].isalpha() else f"project_{name}".rstrip("_")


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=str))
@click.option("-p", "--project-dir", "project_dir", default=None, type=click.Path(file_okay=False, path_type=str),
              help="Folder to create the project in (as streamt's init; the same as DIRECTORY).")
@click.option("--project-name", default=None, help="Project name (default: the folder's name).")
@click.option("--force", is_flag=True, help="Write into a folder that is not empty, replacing the scaffold's files.")
@click.option("--dry-run", is_flag=True, help="List the files that would be written, write nothing.")
@guarded
def init(directory: str | None, project_dir: str | None, project_name: str | None, force: bool,
         dry_run: bool) -> None:
    """Create a runnable project in DIRECTORY (default: the current folder): a JSON source with sample
    data, a stream and a table model, data tests, an exposure and a definitions.py for Dagster.

    Then: `streamt run -p DIRECTORY`, and `dg dev -f DIRECTORY/definitions.py` for the UI."""
    if directory and project_dir and Path(directory).resolve() != Path(project_dir).resolve():
        raise click.UsageError(f"give the folder once: DIRECTORY {directory!r} or -p {project_dir!r}")
    target = Path(directory or project_dir or ".")
    name = project_name or _name_for(target.resolve())
    if not _NAME.match(name):
        raise click.UsageError(f"project name {name!r}: use letters, digits and underscores, starting with a "
                               "letter (--project-name)")
    if target.exists() and not target.is_dir():
        raise click.UsageError(f"{target} exists and is not a folder")
    present = sorted(p.name for p in target.iterdir()) if target.is_dir() else []
    if present and not force:
        shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
        click.echo(f"error: {target} is not empty ({shown}): streamt init writes only into a new or empty folder; "
                   "pick another folder, or add --force to write the scaffold's files into this one", err=True)
        sys.exit(EXIT_INVALID)
    template = _template()
    if dry_run:
        click.echo(f"would create project {name!r} in {target}:")
        for rel in template:
            click.echo(f"  {rel}")
        return
    for rel, content in template.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.replace(PLACEHOLDER.encode(), name.encode()))
    click.echo(f"created project {name!r} in {target} ({len(template)} files)")
    where = "" if str(target) == "." else f" -p {target}"
    click.echo(f"next: streamt validate{where} && streamt run{where}; the UI: dg dev -f "
               f"{target / 'definitions.py'}")
