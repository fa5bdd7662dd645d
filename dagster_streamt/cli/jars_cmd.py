"""``streamt jars``: the jars pyspark does not bundle, fetched ahead of time or listed (see dagster_streamt/jars)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from .common import guarded, project_options

_NAMES = ("delta", "kafka", "s3", "broker")


@click.group("jars")
def jars() -> None:
    """The jars pyspark does not bundle (Delta Lake, Kafka and Avro connectors, S3A, a Kafka broker).

    A run fetches what its project needs on first use, with Spark's own Ivy, and caches it; these commands
    do it ahead of time (CI, cluster images, machines without Maven Central: copy the cache folder over)
    and show what is cached."""


@jars.command("fetch")
@click.argument("names", nargs=-1, type=click.Choice(_NAMES))
@click.option("--all", "all_sets", is_flag=True, help="Every set, whatever the project uses.")
@click.option("--force", is_flag=True, help="Resolve again even when cached.")
@project_options
@guarded
def fetch(names: tuple[str, ...], all_sets: bool, force: bool, project_dir: str, env: str | None) -> None:
    """Resolve jar sets with Spark's Ivy into the cache: NAMES, --all, or (neither) what the project at
    -p needs. The project's spark.jars.ivy, spark.jars.repositories and spark.jars.ivySettings are used."""
    from ..jars import sets
    from ..jars.fetch import resolve
    from ..jars.sets import JarsUnavailable
    from ..spec.loader import find_root_file

    project = None
    if find_root_file(Path(project_dir)) is not None:  # stream_project.yml or .yaml
        from .common import load_or_exit

        project = load_or_exit(project_dir, env, allow_errors=True).project
    if all_sets or names:
        wanted = [sets.SETS[n]() for n in (_NAMES if all_sets else dict.fromkeys(names))]
    elif project is not None:
        from ..spark.session.session_jars import needed_sets

        wanted = needed_sets(project)
    else:
        raise click.UsageError(f"no stream_project.yml in {project_dir}: name the sets ({', '.join(_NAMES)}), "
                               "give --all, or point -p at a project")
    conf = dict(project.runtime.spark.conf) if project is not None else {}
    try:
        for jar_set in wanted:
            found = resolve(jar_set, conf, click.echo, force=force)
            click.echo(f"{jar_set.key}: {jar_set.what}: {len(found)} jars in {found[0].parent}")
    except JarsUnavailable as exc:
        raise click.ClickException(str(exc)) from None


@jars.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@guarded
def list_(fmt: str) -> None:
    """Each jar set: its Maven coordinates, its cache folder and whether it is there."""
    from ..jars import sets
    from ..jars.fetch import cached, folder, policy

    rows: list[dict[str, Any]] = []
    for name in _NAMES:
        jar_set = sets.SETS[name]()
        found = cached(jar_set)
        rows.append({"name": name, "what": jar_set.what, "packages": list(jar_set.packages),
                     "folder": str(folder(jar_set)), "cached": bool(found), "jars": len(found or [])})
    if fmt == "json":
        click.echo(json.dumps({"policy": policy(), "sets": rows}, indent=2, sort_keys=True))
        return
    click.echo(f"jar policy: {policy()} (runtime.spark.jars of a project, or STREAMT_JARS, can change it)")
    for row in rows:
        state = f"cached, {row['jars']} jars" if row["cached"] else "not cached (fetched on first use)"
        click.echo(f"{row['name']:<7} {row['what']}: {state}\n        {', '.join(row['packages'])}\n"
                   f"        {row['folder']}")
