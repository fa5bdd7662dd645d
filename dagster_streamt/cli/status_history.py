"""``streamt status --history MODEL``: the model's recent Delta versions, read from the log with delta-rs
(no Spark, no Dagster instance): what each commit did and, for ours, what it was built from."""

from __future__ import annotations

from typing import Any

import click

from .common import cell, fail
from .delta_models import delta_table_or_exit


def show_history(loaded: Any, name: str, limit: int, fmt: str) -> None:
    from ..spark.delta.delta_history import HistoryUnavailable, history, history_json

    table = delta_table_or_exit(loaded, name)
    try:
        versions = history(table, limit)
    except HistoryUnavailable as exc:
        fail(f"model {name}: {exc}")
    if fmt == "json":
        click.echo(history_json(name, table, versions))
        return
    click.echo(f"{name}: Delta table {table} (newest first; `streamt restore {name} --version N` goes back)")
    click.echo(f"{'version':>7}  {'committed (UTC)':<23}  {'operation':<20} {'+rows':>9} {'-rows':>9} "
               f"{'table rows':>10}  note")
    for v in versions:
        note = v.note or ""
        if v.restored_from is not None:
            note = f"restored version {v.restored_from}" + (f": {note}" if note else "")
        stamp = v.timestamp.replace("T", " ").removesuffix("Z")
        click.echo(f"{v.version:>7}  {stamp:<23}  {v.operation:<20} {cell(v.rows_added):>9} {cell(v.rows_removed):>9} "
                   f"{cell(v.table_rows):>10}  {note}".rstrip())
