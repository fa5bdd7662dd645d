"""``streamt restore MODEL --version N``: undo, by making an earlier version of a table model's Delta table
current again (Delta's RESTORE, one new commit: later versions stay in the history)."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from .common import fail, load_or_exit, project_command
from .delta_models import delta_table_or_exit, jvm_console_on_stderr


def _when(text: str) -> datetime:
    """ISO 8601; without an offset the time is UTC, as `streamt status --history` prints it."""
    try:
        when = datetime.fromisoformat(text.strip().replace(" ", "T", 1))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a time like 2026-01-31T12:00:00Z or '2026-01-31 12:00'",
                                 param_hint="--timestamp") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@project_command("restore")
@click.argument("model")
@click.option("--version", "version", type=click.IntRange(min=0), default=None, metavar="N",
              help="The Delta version to go back to (`streamt status --history MODEL` lists them).")
@click.option("--timestamp", "timestamp", default=None, metavar="TIME",
              help="Or: the version that was current at TIME (ISO 8601, UTC unless it has an offset).")
def restore(project_dir: str, env: str | None, model: str, version: int | None, timestamp: str | None) -> None:
    """Make an earlier version of table MODEL current again, under the model's writer lock.

    The next `streamt run` refreshes from what that version was built from (new input files since are
    appended again). Versions whose files `streamt vacuum` deleted cannot be restored.
    """
    from ..spark.delta.delta_history import HistoryUnavailable
    from ..spark.delta.delta_maintenance import check_target, version_at
    from ..spark.errors import StreamtSparkError

    if (version is None) == (timestamp is None):
        raise click.UsageError("give exactly one of --version N or --timestamp TIME")
    loaded = load_or_exit(project_dir, env)
    table = delta_table_or_exit(loaded, model, restore=True)
    try:
        target = version if version is not None else version_at(table, _when(timestamp or ""))
        check_target(model, table, target)  # before Spark starts: a wrong version costs no JVM
        from ..spark.delta.delta_maintenance import restore as restore_table
        from ..spark.session.session import create_session
        from ..spark.storage.warehouse import Warehouse

        with jvm_console_on_stderr():
            spark = create_session(loaded.project)
            done = restore_table(spark, Warehouse.for_project(loaded.project), model, target)
    except (StreamtSparkError, HistoryUnavailable) as exc:
        fail(str(exc))
    click.echo(f"{model}: restored version {done.restored} as version {done.version} ({done.rows:,} rows); "
               f"`streamt status --history {model}` shows it")
