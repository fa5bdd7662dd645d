"""The detached watcher of a project's Spark Connect server (see :mod:`.project_server`).

``python -m dagster_streamt.spark.session.server_keeper STATE_DIR IDLE_SECONDS PID`` checks once a second:

* the server's pid is gone: nothing to keep, exit; ``server.json`` gone or naming another server
  (stopped, replaced, or the project folder deleted): make sure it is stopped, exit;
* a ``lease-*`` file that no process holds: a client died without cleaning up, and its queries may
  still run in the server; stop the server as soon as no live client remains;
* no live client for ``IDLE_SECONDS``: stop the server.

Every decision to stop is taken under ``start.lock``, the lock a client holds while it checks the
server and takes its lease, so a run never connects to a server being stopped.
"""

from __future__ import annotations

import fcntl
import sys
import time
from pathlib import Path

from ..storage.locks import FileLock
from .project_server import pid_alive, read_state, stop_pid


def _leases(folder: Path) -> tuple[int, list[Path]]:
    """(live clients, lease files left by dead ones)."""
    live, dead = 0, []
    for lease in sorted(folder.glob("lease-*")):
        try:
            with open(lease, "a", encoding="utf-8") as fh:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                dead.append(lease)  # we got the lock: its client is gone
        except BlockingIOError:
            live += 1
        except OSError:
            continue
    return live, dead


def _stop(folder: Path, pid: int, why: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} stopping server pid {pid}: {why}", flush=True)
    state = read_state(folder)
    if state is not None and state.get("pid") == pid:
        (folder / "server.json").unlink(missing_ok=True)
        for lease in folder.glob("lease-*"):
            lease.unlink(missing_ok=True)
    stop_pid(pid)


def keep(folder: Path, idle_seconds: float, pid: int, tick: float = 1.0) -> None:
    idle_since = time.monotonic()
    while True:
        time.sleep(tick)
        current = read_state(folder)
        if not pid_alive(pid):
            return
        if current is None or current.get("pid") != pid:  # stopped or replaced, or the project is gone
            _stop(folder, pid, "its state no longer names it")
            return
        live, dead = _leases(folder)
        if live:
            idle_since = time.monotonic()
            continue
        why = (f"a client (lease {dead[0].name}) ended without releasing it" if dead
               else f"no client for {idle_seconds:.0f} s" if time.monotonic() - idle_since >= idle_seconds else None)
        if why is None:
            continue
        with FileLock(folder / "start.lock", wait=True):
            live, dead = _leases(folder)  # a run may have taken a lease meanwhile
            if live:
                idle_since = time.monotonic()
                continue
            _stop(folder, pid, why)
        return


if __name__ == "__main__":
    keep(Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]))
