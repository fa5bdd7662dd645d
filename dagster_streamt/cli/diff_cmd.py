"""``streamt diff``: what a change to the project means, between two git revisions, before any run.

Exit codes: 0, also when models changed; 1 a project that does not load, an unreadable revision, or a
head with errors (the diff is printed first: an error is often what the change broke);
2 usage; 3 with ``--fail-on CLASS`` when a change of that class or a worse one is present (the gate a
pull request runs: ``streamt diff --base origin/main --fail-on breaking``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import fail, load_or_exit, print_diagnostics, project_command

if TYPE_CHECKING:
    from ..changes.classify import ChangeSet
    from ..core.loaded import LoadedProject

EXIT_GATE = 3
MAX_ERRORS = 10
FAIL_ON = ("metadata", "new", "non_breaking", "breaking", "state_incompatible", "destructive")


def _load_revision(project_dir: str, env: str | None, revision: str, into: Path) -> LoadedProject | None:
    """The project as ``revision`` has it (None: the revision has no project folder there)."""
    from ..api import load
    from ..changes.revision import RevisionError, project_at
    from ..spec.errors import ProjectError

    try:
        folder = project_at(Path(project_dir), revision, into)
    except RevisionError as exc:
        fail(str(exc))
    if folder is None:
        return None
    try:
        return load(str(folder), env)  # with its errors, if any: they are reported, the diff still says what changed
    except ProjectError as exc:
        click.echo(click.style(f"error: the project at {revision} does not load:", fg="red"), err=True)
        print_diagnostics([replace(d, file=f"{revision}:{_relative(d.file, folder)}") for d in exc.diagnostics])
        sys.exit(1)


def _relative(file: str, folder: Path) -> str:
    try:
        return Path(file).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return file


def _empty_like(head: LoadedProject) -> Any:
    """A base with no models and no sources: every model of the head is new."""
    from ..changes.facets import ProjectFacets
    from ..lineage.column_types import ProjectColumnLineage

    return ProjectFacets(head, ProjectColumnLineage({}), {}, {}, {})


def _data_diff(loaded: LoadedProject, name: str, from_version: int, to_version: int | None, fmt: str) -> None:
    """``--data``: the rows of model ``name``'s table that differ between two Delta versions."""
    from ..spark.delta.row_diff import VersionUnavailable, row_diff
    from .delta_models import delta_table_or_exit

    table = delta_table_or_exit(loaded, name)
    try:
        found = row_diff(name, table, from_version, to_version, loaded.project.models[name].key_columns)
    except VersionUnavailable as exc:
        fail(f"model {name}: {exc}")
    if fmt == "json":
        click.echo(json.dumps(found.to_dict(), indent=2, sort_keys=True, default=str))
        return
    by = f"by key ({', '.join(found.key)})" if found.key else "by whole row"
    click.echo(f"{name}: version {found.from_version} ({found.rows_before:,} rows) -> version {found.to_version} "
               f"({found.rows_after:,} rows), {by}")
    click.echo(f"  added {found.added:,}, removed {found.removed:,}" +
               (f", changed {found.changed:,}" if found.key else ""))
    if found.note:
        click.echo(f"  note: {found.note}")
    for label, rows in sorted(found.samples.items()):
        for row in rows:
            text = (f"{json.dumps(row[0], sort_keys=True, default=str)} -> "
                    f"{json.dumps(row[1], sort_keys=True, default=str)}") if label == "changed" else \
                json.dumps(row, sort_keys=True, default=str)
            click.echo(f"  {label}: {text}")


@project_command("diff")
@click.option("--base", "base_ref", default=None, metavar="REF",
              help="The git revision to compare with (a branch, tag or commit: origin/main, HEAD~1).")
@click.option("--head", "head_ref", default=None, metavar="REF",
              help="The revision to judge; default: the project as it is in the working tree.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(FAIL_ON), default=None,
              help=f"Exit {EXIT_GATE} when a change of this class or a worse one is present "
                   "(order: " + " < ".join(FAIL_ON) + ").")
@click.option("--data", "data_model", default=None, metavar="MODEL",
              help="Instead: the rows of MODEL's table added, removed and changed (by its key) between two Delta "
                   "versions (--from, --to).")
@click.option("--from", "from_version", type=click.IntRange(min=0), default=None, metavar="VERSION")
@click.option("--to", "to_version", type=click.IntRange(min=0), default=None, metavar="VERSION",
              help="With --data; default: the table's current version.")
def diff(project_dir: str, env: str | None, base_ref: str | None, head_ref: str | None, fmt: str,
         fail_on: str | None, data_model: str | None, from_version: int | None, to_version: int | None) -> None:
    """Each model and source classed between two revisions (new, unchanged, metadata, non_breaking,
    breaking, state_incompatible, destructive), with the downstream models, columns, exposures and
    owners it reaches and the order a run would refresh them in. Offline: no Spark, no run.

    With --data MODEL --from VERSION: the rows that differ between two versions of the model's table."""
    if (base_ref is None) == (data_model is None):
        raise click.UsageError("give --base REF (definitions between two revisions) or --data MODEL --from VERSION "
                               "(rows between two table versions)")
    if data_model is not None:
        if from_version is None:
            raise click.UsageError("--data needs --from VERSION (`streamt status --history MODEL` lists them)")
        if head_ref is not None or fail_on is not None:
            raise click.UsageError("--head and --fail-on compare revisions: use them with --base")
        _data_diff(load_or_exit(project_dir, env), data_model, from_version, to_version, fmt)
        sys.exit(0)
    if from_version is not None or to_version is not None:
        raise click.UsageError("--from and --to are table versions: use them with --data MODEL")
    _revision_diff(project_dir, env, str(base_ref), head_ref, fmt, fail_on)


def _revision_diff(project_dir: str, env: str | None, base_ref: str, head_ref: str | None, fmt: str,
                   fail_on: str | None) -> None:
    from ..changes import classify
    from ..changes.facets import facets_of
    from ..changes.render import text

    with tempfile.TemporaryDirectory(prefix="streamt-diff-") as scratch:
        if head_ref is None:
            head = load_or_exit(project_dir, env, allow_errors=True)
        else:
            loaded_head = _load_revision(project_dir, env, head_ref, Path(scratch) / "head")
            if loaded_head is None:
                fail(f"the revision {head_ref} has no project at {project_dir}")
            head = loaded_head
        base = _load_revision(project_dir, env, base_ref, Path(scratch) / "base")
        base_facets = facets_of(base, use_cache=False) if base is not None else _empty_like(head)
        changes = classify(base if base is not None else head, head, base_facets=base_facets,
                           head_facets=facets_of(head, use_cache=head_ref is None))
    if fmt == "json":
        click.echo(json.dumps({"base": base_ref, "head": head_ref or "working tree", **changes.to_dict()},
                              indent=2, sort_keys=True))
    else:
        click.echo(text(changes, f"streamt diff: {base_ref} -> {head_ref or 'working tree'} ({project_dir})"))
    if head.errors:  # most often what the change broke (a removed column a test or a model still reads)
        click.echo(click.style(f"✗ {head_ref or 'the working tree'} has {len(head.errors)} error(s) "
                               "(streamt validate lists them):", fg="red"), err=True)
        for d in head.errors[:MAX_ERRORS]:
            click.echo(f"  {d.file}:{d.line}: {d.code}: {d.message}", err=True)
        sys.exit(1)
    gate(changes, fail_on)


def gate(changes: ChangeSet, fail_on: str | None) -> None:
    """Exit: :data:`EXIT_GATE` naming the changes at ``fail_on`` or worse (``--fail-on``), else 0."""
    failing = changes.fails(fail_on) if fail_on is not None else []
    if failing:
        click.echo(click.style(f"✗ {len(failing)} change(s) at {fail_on} or worse: "
                               + ", ".join(f"{c.name} ({c.change})" for c in failing), fg="red"), err=True)
        sys.exit(EXIT_GATE)
    sys.exit(0)
