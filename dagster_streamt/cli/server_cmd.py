"""``streamt server``: the project's own Spark Connect server (see spark/session/project_server.py)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from .common import load_or_exit, project_command

if TYPE_CHECKING:
    from ..spec.project import Project


@project_command("server")
@click.argument("action", type=click.Choice(["start", "status", "stop"]), default="status")
def server(action: str, project_dir: str, env: str | None) -> None:
    """Start, show (status) or stop the Spark Connect server this project's runs share.

    While it is up, runs connect to it instead of starting a JVM each (about 4 s less per run, and a
    warm JIT). It stops by itself after runtime.spark.connect_server.idle_minutes without a run;
    nothing starts it unless you do (or a run, with runtime.spark.connect_server.start: true)."""
    from ..spark.session.connect_server import port_open
    from ..spark.session.project_server import pid_alive, read_state, state_dir, stop_project_server

    loaded = load_or_exit(project_dir, env)
    folder = state_dir(loaded.project)
    if action == "start":
        _start(loaded.project)
        return
    if action == "stop":
        stopped = stop_project_server(loaded.project)
        click.echo("stopped the project's Spark server" if stopped else "no Spark server was running for this project")
        return
    state = read_state(folder) or {}
    pid, port = state.get("pid"), state.get("port")
    if not (isinstance(pid, int) and isinstance(port, int) and pid_alive(pid)):
        click.echo("no Spark server is running for this project (`streamt server start` starts one)")
        return
    started = state.get("started")
    age = f", up {(time.time() - started) / 60:.0f} min" if isinstance(started, int | float) else ""
    answering = "" if port_open(port) else " (not answering yet)"
    clients = len(list(folder.glob("lease-*")))
    click.echo(f"Spark server pid {pid} at sc://localhost:{port}{answering}{age}; {clients} client(s) now; "
               f"logs in {folder}")


def _start(project: Project) -> None:
    """Bring the server up (unless it runs with this conf), warm it as ``connect_server.warmup`` says,
    and return: the server and its keeper stay, this command does not."""
    from ..spark.server_warmup import warm_up
    from ..spark.session.project_server import ensure_project_server, state_dir
    from ..spark.session.settings import SparkSettings, session_conf

    settings = SparkSettings.from_project(project)
    if settings.remote:
        raise click.ClickException("runtime.spark.remote is set: runs use that Spark Connect server, not one of "
                                   "the project's own")
    begin = time.monotonic()
    url, started = ensure_project_server(project, settings, session_conf(project, settings))
    if not started:
        click.echo(f"the project's Spark server is already running at {url}")
        return
    click.echo(f"started the project's Spark server at {url} ({time.monotonic() - begin:.1f} s)")
    mode = settings.connect_server.warmup
    if mode != "off":
        begin = time.monotonic()
        failure = warm_up(url, state_dir(project), mode)
        if failure:
            click.echo(f"warning: the warm-up failed ({failure}); the server works, its first runs are slower",
                       err=True)
        else:
            click.echo(f"warmed it up ({mode}, {time.monotonic() - begin:.1f} s)")
    idle = settings.connect_server.idle_minutes
    click.echo(f"runs of this project now use it; it stops after {idle:g} idle minutes, or with `streamt server stop`")
