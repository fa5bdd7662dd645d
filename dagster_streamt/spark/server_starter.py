"""The detached starter a run leaves behind (``python -m dagster_streamt.spark.server_starter SPEC``):
it starts the project's Spark Connect server and warms it up, outside any run (see
:mod:`.project_server`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..spec.loader import load_project
from ..spec.models import ConnectServer
from .project_server import ensure_project_server, on_exit, pid_alive, read_state, state_dir
from .server_warmup import warm_up
from .settings import SparkSettings, session_conf


def start_from_spec(spec: str) -> None:
    """Bring the server up (unless another starter did), then warm it (see :mod:`.server_warmup`)."""
    data = json.loads(spec)
    project, _ = load_project(Path(data["root"]), env=data.get("env"))
    if project is None:
        raise SystemExit(f"cannot load the project at {data['root']}")
    settings = SparkSettings(master=data["master"], app_name=data.get("app_name"), conf=data["conf"],
                             connect_server=ConnectServer(start=data["start"], idle_minutes=data["idle_minutes"]))
    folder = state_dir(project)
    url, started = ensure_project_server(project, settings, session_conf(project, settings), lease=True)
    print(time.strftime("%Y-%m-%dT%H:%M:%S"), "server at", url, "(started)" if started else "(already up)",
          flush=True)
    if not started:  # another starter brought it up (and warms it)
        return
    state = read_state(folder) or {}
    pid = state.get("pid")
    work = threading.Thread(target=warm_up, args=(url, folder), daemon=True)
    work.start()
    while work.is_alive():  # a server stopped meanwhile (a user, a test) must not leave this process waiting
        if not (isinstance(pid, int) and pid_alive(pid)):
            print(time.strftime("%Y-%m-%dT%H:%M:%S"), "server gone before the warm-up ended", flush=True)
            on_exit()
            os._exit(0)
        work.join(0.5)
    print(time.strftime("%Y-%m-%dT%H:%M:%S"), "warmed up", flush=True)
    if isinstance(pid, int) and pid_alive(pid):
        _spawn_warm_cli(folder, pid)


def _spawn_warm_cli(folder: Path, pid: int) -> None:
    """The project's warm command process (``dagster_streamt.cli.warm_cli``), for as long as the server."""
    log = open(folder / "warm-cli.log", "a", encoding="utf-8")  # noqa: SIM115 - handed to the child
    try:
        subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli.warm_cli", str(folder), str(pid)],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True)
    finally:
        log.close()


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")  # as the CLI does
    start_from_spec(sys.argv[1])
