"""``streamt observe``: each stream model's health (state, last batch, rates, lag, whether batches keep up
with the trigger) from what its continuous runs reported to the Dagster instance, without Spark or a
broker. Exit 1 when a stream failed or stalled, so a cron job or a probe can alert on it."""

from __future__ import annotations

import json
import time

import click

from .common import EXIT_INVALID, load_or_exit, project_command

_BAD = {"failed", "stalled"}


def _age(at: float | None, now: float) -> str:
    return "-" if at is None else f"{now - at:,.0f} s ago"


@project_command("observe")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def observe(project_dir: str, env: str | None, fmt: str) -> None:
    """Each stream model's health: running or not, its last micro-batch, records per second, watermark and
    Kafka lag, and whether batches keep up with the trigger (exit 1 when one failed or stalled)."""
    from ..dagster.stream_health import stream_health
    from .dagster_exec import instance_or_exit, location_or_exit

    loaded = load_or_exit(project_dir, env)
    keys = location_or_exit(loaded).keys
    now = time.time()
    with instance_or_exit(loaded) as instance:
        found = stream_health(loaded, instance, keys, now)
    if fmt == "json":
        click.echo(json.dumps({"streams": [h.to_dict() for h in found]}, indent=2, sort_keys=True))
    elif not found:
        click.echo("The project has no stream model (`materialized: stream`).")
    else:
        click.echo(f"{'model':<28} {'health':<10} {'state':<10} {'last batch':<16} {'rows/s in':>10} "
                   f"{'rows/s done':>11} {'batch s':>8} {'wm lag s':>9} {'kafka behind':>12}")
        for h in found:
            batch = "-" if h.last_batch_id is None else f"{h.last_batch_id} {_age(h.last_batch_at, now)}"

            def num(x: float | int | None, fmt_: str = ",.1f") -> str:
                return "-" if x is None else format(x, fmt_)

            click.echo(f"{h.model:<28} {h.health:<10} {h.state:<10} {batch:<16} {num(h.input_rows_per_second):>10} "
                       f"{num(h.processed_rows_per_second):>11} {num(h.batch_duration_s, '.2f'):>8} "
                       f"{num(h.watermark_lag_s):>9} {num(h.kafka_offsets_behind, ','):>12}")
            if h.error:
                click.echo(f"  {h.model}: {h.error[:300]}")
    if any(h.health in _BAD for h in found):
        raise SystemExit(EXIT_INVALID)
