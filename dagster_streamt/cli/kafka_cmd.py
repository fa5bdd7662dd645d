"""``streamt kafka``: a local Kafka broker for trying a project against real topics (see kafka/broker.py)."""

from __future__ import annotations

import signal
import time

import click

from .common import guarded


@click.group("kafka")
def kafka() -> None:
    """A local Kafka broker (no Docker): Kafka's own jars, fetched once (`streamt jars fetch broker`)."""


@kafka.command("start")
@click.option("--dir", "directory", default=".streamt/kafka", show_default=True,
              type=click.Path(file_okay=False, path_type=str),
              help="Folder for the broker's data, config and log; starting again on it keeps its topics.")
@click.option("--port", default=9092, show_default=True, type=click.IntRange(0, 65535),
              help="Port of the broker on 127.0.0.1 (0: any free port).")
@click.option("--auto-create-topics", is_flag=True,
              help="Let a first write create a missing topic (off: a misspelt topic fails instead).")
@guarded
def start(directory: str, port: int, auto_create_topics: bool) -> None:
    """Run a single-node Kafka broker (KRaft, loopback only) in the foreground until Ctrl-C.

    Point a project at it with runtime.kafka.bootstrap_servers: the address it prints."""
    from ..jars.sets import JarsUnavailable
    from ..kafka.broker import KafkaBrokerError, start_broker

    click.echo(f"starting a Kafka broker in {directory} ...")
    try:
        broker = start_broker(directory, port, auto_create_topics=auto_create_topics)
    except (JarsUnavailable, KafkaBrokerError) as exc:  # a setup gap, not a bug: the message says the fix
        raise click.ClickException(str(exc)) from None
    signal.signal(signal.SIGTERM, _interrupt)
    click.echo(f"Kafka broker up at {broker.bootstrap_servers} ({broker.started_in:.1f} s; log in "
               f"{broker.directory / 'server.log'}); Ctrl-C stops it")
    try:
        while broker.running():
            time.sleep(0.5)
        raise click.ClickException(f"the Kafka broker exited (code {broker.process.returncode}); see "
                                   f"{broker.directory / 'server.log'}")
    except KeyboardInterrupt:
        click.echo("stopping the Kafka broker ...")
    finally:
        broker.stop()
    click.echo("stopped")


def _interrupt(_signum: int, _frame: object) -> None:
    """SIGTERM (a service manager, `kill`) stops the broker as cleanly as Ctrl-C does."""
    raise KeyboardInterrupt
