"""``streamt compile``: target/manifest.json and target/compiled/<model>.sql."""

from __future__ import annotations

import click

from .common import load_or_exit, project_command


@project_command("compile")
def compile_(project_dir: str, env: str | None) -> None:
    """Render and check every model, then write the manifest and the compiled SQL."""
    from ..manifest import write_manifest

    loaded = load_or_exit(project_dir, env)
    path = write_manifest(loaded)
    n = sum(1 for m in loaded.compiled.models.values() if m.sql)
    click.echo(f"Compiled {len(loaded.compiled.models)} models ({n} with SQL) -> {path}")
    click.echo(f"SQL: {path.parent / 'compiled'}/<model>.sql")
    flink = sorted(n for n, m in loaded.compiled.models.items() if m.spark_sql)
    if flink:
        click.echo(f"Flink SQL translated for Spark ({len(flink)}): {', '.join(flink)} -> <model>.spark.sql")
    inferred = loaded.project.inferred
    if inferred:
        click.echo("Materializations inferred (no `materialized:`):")
        for name in sorted(inferred):
            click.echo(f"  {name}: {loaded.project.models[name].materialized} ({inferred[name]})")
