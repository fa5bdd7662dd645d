"""``streamt server``: the project's own Spark Connect server (see spark/project_server.py)."""

from __future__ import annotations

import time

import click

from .common import guarded, load_or_exit, project_options


@click.command("server")
@click.argument("action", type=click.Choice(["status", "stop"]), default="status")
@project_options
@guarded
def server(action: str, project_dir: str, env: str | None) -> None:
    """Show (status) or stop the Spark Connect server this project's runs share.

    The first run of a project with a local master starts it; it stops by itself after
    runtime.spark.connect_server.idle_minutes without a run."""
    from ..spark.connect_server import port_open
    from ..spark.project_server import pid_alive, read_state, state_dir, stop_project_server

    loaded = load_or_exit(project_dir, env)
    folder = state_dir(loaded.project)
    if action == "stop":
        stopped = stop_project_server(loaded.project)
        click.echo("stopped the project's Spark server" if stopped else "no Spark server was running for this project")
        return
    state = read_state(folder) or {}
    pid, port = state.get("pid"), state.get("port")
    if not (isinstance(pid, int) and isinstance(port, int) and pid_alive(pid)):
        click.echo("no Spark server is running for this project (the next run starts one)")
        return
    started = state.get("started")
    age = f", up {(time.time() - started) / 60:.0f} min" if isinstance(started, int | float) else ""
    answering = "" if port_open(port) else " (not answering yet)"
    clients = len(list(folder.glob("lease-*")))
    click.echo(f"Spark server pid {pid} at sc://localhost:{port}{answering}{age}; {clients} client(s) now; "
               f"logs in {folder}")
