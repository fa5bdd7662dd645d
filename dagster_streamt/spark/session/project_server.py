"""The project's own Spark Connect server, started when the user asks and shared by every later run.

Each ``streamt run`` (and each run ``dg dev`` launches) is a new process; with an embedded
session each pays for a JVM start and a cold JIT. ``streamt server start`` (or a run, with
``runtime.spark.connect_server.start: true``) starts a server for the project; while it is up, runs
with ``start: auto`` (the default) connect to it in well under a second and find its JIT warm.
Without it, a run is embedded and leaves no process behind.

State lives in ``<project>/.streamt/connect-server/``:

* ``server.json``: port, pid and a hash of the session conf; a run uses the server only when its
  pid is alive, its port answers and its conf is the one this run wants (else it runs embedded);
* ``start.lock``: held while a server is checked, started or stopped, so there are never two; a
  run that finds it held (a start in progress) does not wait: it runs embedded;
* ``lease-<pid>``: each client process holds an exclusive ``flock`` on its own file while it uses
  the server and deletes the file when done. A lease file nobody holds means a client died
  without cleaning up (``kill -9``): its queries may still run in the server, so the keeper stops
  the server once no live client remains;
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
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from ...core.files import atomic_write
from ...core.processes import pid_alive
from ...spec.project import Project
from ..errors import SparkSetupError
from ..storage.locks import FileLock, LockBusy
from ..storage.paths import ProjectPaths
from .connect_server import port_open, start_server_process
from .settings import SparkSettings

STATE = "connect-server"
_leases: dict[str, IO[str]] = {}  # state dir -> this process's held lease file
_decide = threading.Lock()
_decided: dict[str, str | None] = {}  # state dir and conf -> this process's answer of connect_url


def state_dir(project: Project) -> Path:
    return ProjectPaths.from_project(project).state_dir / STATE


def conf_hash(settings: SparkSettings, conf: Mapping[str, str]) -> str:
    text = json.dumps({"master": settings.master, "conf": dict(sorted(conf.items()))}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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


def _fitting(state: Mapping[str, object], wanted: str) -> int | None:
    port, pid = state.get("port"), state.get("pid")
    if isinstance(port, int) and isinstance(pid, int) and pid_alive(pid) and state.get("conf") == wanted \
            and port_open(port):
        return port
    return None


def connect_url(project: Project, settings: SparkSettings, conf: Mapping[str, str]) -> str | None:
    """``sc://localhost:<port>`` of the project's running server when it was started with this conf,
    with a lease held by this process until it exits; None when there is none (or one is starting
    right now): the caller runs embedded."""
    folder = state_dir(project)
    key = f"{folder}#{conf_hash(settings, conf)}"
    with _decide:  # once per process: a process never mixes an embedded and a client session
        if key not in _decided:
            _decided[key] = _lease_url(folder, conf_hash(settings, conf))
        return _decided[key]


def _lease_url(folder: Path, wanted: str) -> str | None:
    try:
        with FileLock(folder / "start.lock"):
            port = _fitting(read_state(folder) or {}, wanted)
            if port is None:
                return None
            _take_lease(folder)
            return f"sc://localhost:{port}"
    except LockBusy:
        return None


def ensure_project_server(project: Project, settings: SparkSettings, conf: Mapping[str, str],
                          lease: bool = False) -> tuple[str, bool]:
    """Start the project's server unless one with this conf runs (an old one with another conf is
    stopped); return its URL and whether this call started it (``lease``: with this process's lease
    taken). Called by ``streamt server start`` and by a run with ``connect_server.start: true``."""
    folder = state_dir(project)
    wanted = conf_hash(settings, conf)
    with FileLock(folder / "start.lock", wait=True):
        state = read_state(folder) or {}
        port = _fitting(state, wanted)
        started = port is None
        if port is None:
            old = state.get("pid")
            if isinstance(old, int) and pid_alive(old):
                stop_pid(old)
            (folder / "warm").unlink(missing_ok=True)  # the new server's warm-up writes it again
            port = settings.connect_server.port or _free_port()
            if port_open(port):
                raise SparkSetupError(
                    f"port {port} (runtime.spark.connect_server.port) is already used by another process; "
                    "choose a free port, or remove `port:` to let streamt pick one")
            pid = start_server_process(project, settings, conf, port, folder)
            atomic_write(folder / "server.json", json.dumps(
                {"port": port, "pid": pid, "conf": wanted, "started": time.time()}, sort_keys=True))
            _spawn_keeper(folder, settings.connect_server.idle_minutes, pid)
        if lease:
            _take_lease(folder)
    return f"sc://localhost:{port}", started


def on_exit() -> None:
    """This process is done with Spark: release its leases (a lease file left behind unheld means a
    client that died). Registered with ``atexit``; the CLI calls it itself before ``os._exit``."""
    while _leases:
        _, fh = _leases.popitem()
        Path(fh.name).unlink(missing_ok=True)
        fh.close()


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


def _spawn_keeper(folder: Path, idle_minutes: float, pid: int) -> None:
    log = open(folder / "keeper.log", "a", encoding="utf-8")  # noqa: SIM115 - handed to the child
    try:
        subprocess.Popen([sys.executable, "-m", "dagster_streamt.spark.session.server_keeper", str(folder),
                          str(idle_minutes * 60), str(pid)], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True, close_fds=True)
    finally:
        log.close()


def _take_lease(folder: Path) -> None:
    """One lease per process and server, held until the process ends (released by :func:`on_exit`)."""
    if str(folder) in _leases:
        return
    fh = open(folder / f"lease-{os.getpid()}", "w", encoding="utf-8")  # noqa: SIM115 - held while in use
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    fh.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
    fh.flush()
    if not _leases:  # the first lease since the last on_exit (a second registration of it finds nothing)
        atexit.register(on_exit)
    _leases[str(folder)] = fh


def stop_project_server(project: Project) -> bool:
    """Stop the project's server now (``streamt``'s tests, or a user); False when none ran."""
    folder = state_dir(project)
    with FileLock(folder / "start.lock", wait=True):
        (folder / "server.json").unlink(missing_ok=True)
        pids = [pid for pid in _recorded_pids(folder) if pid_alive(pid) and _is_server(pid)]
        for pid in pids:
            stop_pid(pid)
        return bool(pids)


def _recorded_pids(folder: Path) -> set[int]:
    """Every server pid this folder recorded (its pid files outlive a lost ``server.json``)."""
    pids = set()
    for pid_file in folder.glob("spark-streamt-*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pids.add(int(pid_file.read_text().split()[0]))
    return pids


def _is_server(pid: int) -> bool:
    """The pid is still a Spark Connect server (pids get reused)."""
    try:
        return b"SparkConnectServer" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return pid_alive(pid)  # no /proc: trust the pid file

