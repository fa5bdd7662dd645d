"""The project's own Spark Connect server, started on first use and shared by every later run.

Each ``streamt run`` (and each run ``dagster dev`` launches) is a new process; with an embedded
session each pays for a JVM start and a cold JIT. With ``runtime.spark.connect_server.start: auto``
(the default for local masters) the first run starts one Connect server for the project and the
next runs connect to it in well under a second.

State lives in ``<project>/.streamt/connect-server/``:

* ``server.json``: port, pid and a hash of the session conf; a run reuses the server only when
  its pid is alive, its port answers and its conf is the one this run would start;
* ``start.lock``: held while a server is checked, started or stopped, so two runs never start two;
* ``lease-<pid>``: each client process holds an exclusive ``flock`` on its own file while it uses
  the server and deletes the file when done. A lease file nobody holds means a client died
  without cleaning up (``kill -9``): its queries may still run in the server, so the keeper stops
  the server once no live client remains (the next run starts a fresh one);
* ``keeper.log``: the keeper (:mod:`.server_keeper`, a small detached process) stops the server
  after ``idle_minutes`` without a client, or as soon as the server dies.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from ..core.files import atomic_write
from ..spec.project import Project
from .connect_server import port_open, start_server_process
from .locks import FileLock
from .paths import ProjectPaths
from .settings import SparkSettings

STATE = "connect-server"
_leases: dict[str, IO[str]] = {}  # state dir -> this process's held lease file


def state_dir(project: Project) -> Path:
    return ProjectPaths.from_project(project).state_dir / STATE


def conf_hash(settings: SparkSettings, conf: Mapping[str, str]) -> str:
    text = json.dumps({"master": settings.master, "conf": dict(sorted(conf.items()))}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_state(folder: Path) -> dict[str, object] | None:
    try:
        data = json.loads((folder / "server.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_project_server(project: Project, settings: SparkSettings, conf: Mapping[str, str]) -> str:
    """``sc://localhost:<port>`` of the project's server (started when none fits), with a lease held
    by this process until :func:`release_lease`."""
    folder = state_dir(project)
    wanted = conf_hash(settings, conf)
    with FileLock(folder / "start.lock", wait=True):
        state = read_state(folder) or {}
        port, pid = state.get("port"), state.get("pid")
        if not (isinstance(port, int) and isinstance(pid, int) and pid_alive(pid) and state.get("conf") == wanted
                and port_open(port)):
            if isinstance(pid, int) and pid_alive(pid):  # another conf (or not answering): the old one goes
                stop_pid(pid)
            port = _free_port()
            pid = start_server_process(project, settings, conf, port, folder)
            atomic_write(folder / "server.json", json.dumps(
                {"port": port, "pid": pid, "conf": wanted, "started": time.time()}, sort_keys=True))
            _spawn_keeper(folder, settings.connect_server.idle_minutes)
        _take_lease(folder)
    return f"sc://localhost:{port}"


def stop_pid(pid: int, timeout: float = 20.0) -> None:
    """SIGTERM (Spark stops its application), SIGKILL when it does not exit in time."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _spawn_keeper(folder: Path, idle_minutes: float) -> None:
    log = open(folder / "keeper.log", "a", encoding="utf-8")  # noqa: SIM115 - handed to the child
    try:
        subprocess.Popen([sys.executable, "-m", "dagster_streamt.spark.server_keeper", str(folder),
                          str(idle_minutes * 60)], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True, close_fds=True)
    finally:
        log.close()


def _take_lease(folder: Path) -> None:
    """One lease per process and server, held until the process ends (released at exit)."""
    if str(folder) in _leases:
        return
    fh = open(folder / f"lease-{os.getpid()}", "w", encoding="utf-8")  # noqa: SIM115 - held while in use
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    fh.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
    fh.flush()
    if not _leases:
        atexit.register(release_leases)
    _leases[str(folder)] = fh


def release_leases() -> None:
    """This process is done with its servers: delete its lease files, then let go of them (a lease
    file left behind unheld means a client that died)."""
    while _leases:
        _, fh = _leases.popitem()
        Path(fh.name).unlink(missing_ok=True)
        fh.close()


def stop_project_server(project: Project) -> bool:
    """Stop the project's server now (``streamt``'s tests, or a user); False when none ran."""
    folder = state_dir(project)
    with FileLock(folder / "start.lock", wait=True):
        state = read_state(folder)
        (folder / "server.json").unlink(missing_ok=True)
        pid = state.get("pid") if state else None
        if not isinstance(pid, int) or not pid_alive(pid):
            return False
        stop_pid(pid)
        return True
