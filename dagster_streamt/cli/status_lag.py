"""``streamt status --lag``: per Kafka source its messages and the lag of the streams reading it.

streamt's ``--lag`` shows consumer lag and message counts per topic. Spark's Kafka source keeps its
position in the query's checkpoint (no consumer group), so the lag shown is the topic's end offsets
minus the offsets of each stream model's last committed batch (:mod:`dagster_streamt.kafka.lag`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .common import cell

if TYPE_CHECKING:
    from ..core.loaded import LoadedProject
    from ..kafka.lag import SourceLag


class LagUnavailable(Exception):
    """The broker did not answer: one line to print instead of the lag."""


def collect(loaded: LoadedProject) -> list[SourceLag]:
    """The project's Kafka sources with offsets and lag; :class:`LagUnavailable` naming the broker and
    the reason when it cannot be reached (never a traceback)."""
    from ..kafka.admin import KafkaAdminError
    from ..kafka.lag import broker_settings, project_lag

    try:
        return project_lag(loaded)
    except KafkaAdminError as exc:
        broker = broker_settings(loaded.project)
        where = broker[0] if broker else "?"
        reason = str(exc).split(f"{where}: ", 1)[-1]  # the client's words, without the address again
        raise LagUnavailable(f"Kafka lag unavailable: no answer from the broker at {where} ({reason}); is it "
                             "running (`streamt kafka start` starts a local one) and are runtime.kafka's "
                             "bootstrap_servers and security settings right?") from None


def echo_table(lags: list[SourceLag]) -> None:
    """One line per source (its total lag), then one per reader and partition, sorted by name."""
    if not lags:
        click.echo("Kafka lag: the project has no Kafka sources")
        return
    click.echo("")
    click.echo(f"{'kafka source':<24} {'topic / reader':<30} {'part':>4} {'end offset':>12} "
               f"{'committed':>12} {'lag':>10}")
    for s in lags:
        topics = ", ".join(s.topics)
        if s.mode == "local":
            click.echo(f"{s.source:<24} {topics:<30} topics are local folders (runtime.kafka.local_dir): no offsets")
            continue
        if s.error:
            click.echo(f"{s.source:<24} {topics:<30} {s.error}")
            continue
        if s.mode != "stream":
            why = ("batch: read by table models only (each run re-reads the topic), no lag"
                   if s.mode == "batch" else "read by no model")
            click.echo(f"{s.source:<24} {topics:<30} {'':>4} {'':>12} {'':>12} {'-':>10}  ~{cell(s.messages)} msgs; "
                       f"{why}")
            continue
        end_total = sum(sum(parts.values()) for parts in s.end_offsets.values())
        click.echo(f"{s.source:<24} {topics:<30} {'all':>4} {end_total:>12,} {'':>12} {cell(s.lag):>10}  "
                   f"~{cell(s.messages)} msgs")
        for r in sorted(s.readers, key=lambda r: r.reader):
            if r.batch is None:
                click.echo(f"{'':<24} {r.reader:<30} never ran (no committed batch): lag unknown")
                continue
            click.echo(f"{'':<24} {r.reader:<30} {'all':>4} {'':>12} {'':>12} {cell(r.total):>10}  "
                       f"batch {r.batch}")
            for p in sorted(r.partitions, key=lambda p: (p.topic, p.partition)):
                label = f"  {p.topic}" if len(s.topics) > 1 else ""
                click.echo(f"{'':<24} {label:<30} {p.partition:>4} {p.end_offset:>12,} {cell(p.committed):>12} "
                           f"{p.lag:>10,}")
