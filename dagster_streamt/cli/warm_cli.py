"""The project's warm command process: ``streamt run`` without two seconds of imports.

A ``streamt run`` spends about 2.3 s importing Dagster, its storage, pyspark's Spark Connect client
and pandas before it does anything: more than a small incremental refresh costs on the project's
Spark server. So next to that server (see :mod:`dagster_streamt.spark.project_server`) runs a
process that has imported all of it once and forks a child per command: ``streamt run|test|backfill``
on a project whose warm process is up hands it its arguments, working directory, environment and
terminal (the file descriptors themselves), and the child runs the command exactly as the CLI would,
in-process on the project's Dagster instance, writing to the user's terminal. The exit status comes
back; Ctrl-C is passed on; a client that dies takes its command down with it.

The process lives as long as the project's Spark server (and refuses commands once the package's
code changed on disk, so an upgrade never runs old code). ``STREAMT_WARM_CLI=off`` runs every command
in its own process. Unix only (file descriptors travel over a Unix socket).

    python -m dagster_streamt.cli.warm_cli STATE_DIR SERVER_PID   # started by the server's starter
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from pathlib import Path

from .warm_client import ENV, SOCKET, code_stamp


# -- the warm process --------------------------------------------------------------------------------
def _preload(root: Path) -> None:
    """Import what a command imports: the CLI, Dagster and its SQLite storage (by opening the
    project's instance once), pyspark's Spark Connect client, OpenLineage."""
    import dagster_streamt.cli.main
    import dagster_streamt.dagster.definitions
    import dagster_streamt.dagster.lineage_emit
    import dagster_streamt.spark.table  # noqa: F401
    from dagster_streamt.dagster.instance import project_instance
    from dagster_streamt.spark.session import connect_modules

    connect_modules()
    with project_instance(root):
        pass


_INHERITED: list[socket.socket] = []  # the listener and other clients' connections: closed in a child


def _child(conn: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    """In the forked child: become the command's process and run it (never returns)."""
    code = 1
    try:
        for sock in (*_INHERITED, conn):
            sock.close()
        for target, fd in zip((0, 1, 2), fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
        os.environ[ENV] = "off"  # this is the command's process: it must not hand itself over again
        if "SPARK_CONNECT_LOG_LEVEL" not in os.environ:
            # pyspark turns its Connect client's log off when imported without this variable, but here it
            # was imported before the command configured logging (which re-enables existing loggers):
            # keep it as quiet as in a command's own process
            import logging

            logging.getLogger("pyspark.sql.connect.logging").setLevel(logging.CRITICAL + 1)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the inherited descriptors, rebound
        sys.stdout = open(1, "w", closefd=False, buffering=1)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False, buffering=1)  # noqa: SIM115
        sys.argv = ["streamt", *[str(a) for a in request["args"]]]  # type: ignore[attr-defined]
        from dagster_streamt.cli.main import main

        main()  # ends the process itself (os._exit) once the command is done
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    os._exit(code)


def serve(folder: Path, server_pid: int) -> None:
    """Accept commands until the project's Spark server is gone or the code changed."""
    import selectors

    from dagster_streamt.spark.project_server import pid_alive

    root = folder.parents[1]
    _preload(root)
    stamp = code_stamp()
    path = folder / SOCKET
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket is the owner's alone
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_umask)
    listener.listen(8)
    mine = path.stat().st_ino  # a later warm process may bind the same path: never unlink its socket
    _INHERITED.append(listener)
    (folder / "warm-cli.pid").write_text(str(os.getpid()), encoding="utf-8")
    print(_now(), f"ready at {path} (server pid {server_pid})", flush=True)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    running: dict[int, socket.socket] = {}  # child pid -> its client's connection
    checked, listening = 0, True
    try:
        while running or listening:
            for key, _ in sel.select(timeout=0.5):
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    _start(conn, stamp, running, sel)
                else:  # a client connection readable: it went away (it sends nothing after its request)
                    for pid, c in list(running.items()):
                        if c is key.fileobj:
                            os.kill(pid, signal.SIGTERM)
            _reap(running, sel)
            checked += 1
            if listening and (not pid_alive(server_pid) or not path.exists() or
                              (checked % 10 == 0 and stamp != code_stamp())):
                listening = False  # no new command; the running ones finish and get their exit status
                sel.unregister(listener)
                _unlink_own(path, mine, folder)
    finally:
        _unlink_own(path, mine, folder)
        listener.close()


def _unlink_own(path: Path, inode: int, folder: Path) -> None:
    with contextlib.suppress(OSError):
        if path.stat().st_ino == inode:
            path.unlink()
            (folder / "warm-cli.pid").unlink(missing_ok=True)


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _start(conn: socket.socket, stamp: str, running: dict[int, socket.socket], sel: object) -> None:
    import selectors

    try:
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        request = json.loads(msg.decode())
    except (OSError, ValueError):
        conn.close()
        return
    if request.get("code") != stamp or len(fds) != 3:
        conn.sendall(b'{"refused": "stale"}\n')
        for fd in fds:
            os.close(fd)
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        _child(conn, request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    print(_now(), f"pid {pid}: streamt {' '.join(map(str, request['args']))}", flush=True)
    running[pid] = conn
    _INHERITED.append(conn)
    assert isinstance(sel, selectors.BaseSelector)
    sel.register(conn, selectors.EVENT_READ)


def _reap(running: dict[int, socket.socket], sel: object) -> None:
    for pid, conn in list(running.items()):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 1 << 8
        if done == 0:
            continue
        code = os.waitstatus_to_exitcode(status)
        print(_now(), f"pid {pid}: exit {code}", flush=True)
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps({"exit": code if code >= 0 else 128 - code}).encode() + b"\n")
        sel.unregister(conn)  # type: ignore[attr-defined]
        conn.close()
        _INHERITED.remove(conn)
        del running[pid]


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")  # as the CLI does
    serve(Path(sys.argv[1]), int(sys.argv[2]))
