"""The client side of the project's warm command process (:mod:`.warm_cli`): hands a command over
when the project has one, with nothing imported beyond the standard library (it runs first in every
``streamt`` process)."""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

from ..core.switches import SPARK_SERVER_ENV, switched_off

SOCKET = "cli.sock"
ENV = "STREAMT_WARM_CLI"
COMMANDS = ("run", "test", "backfill")
PACKAGE = Path(__file__).resolve().parents[1]


def code_stamp() -> str:
    """Changes whenever a module of the package changes on disk (an upgrade, an edit)."""
    newest = max((p.stat().st_mtime_ns for p in PACKAGE.rglob("*.py")), default=0)
    return f"{PACKAGE}:{newest}"


def _project_dir(args: list[str]) -> str:
    for i, arg in enumerate(args):
        if arg in ("-p", "--project-dir") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--project-dir="):
            return arg.split("=", 1)[1]
    return "."


def hand_over(args: list[str]) -> int | None:
    """Run ``streamt ARGS`` in the project's warm process; its exit status, or None (nothing was
    started) when there is none to take it: the caller runs the command itself. A long-lived
    ``--continuous`` run gains nothing from it and keeps its own process."""
    if not args or args[0] not in COMMANDS or "--continuous" in args or not hasattr(socket, "send_fds") or \
            switched_off(ENV) or switched_off(SPARK_SERVER_ENV):
        return None
    path = Path(_project_dir(args[1:])).resolve() / ".streamt" / "connect-server" / SOCKET
    if not path.exists():
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
        request = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ), "code": code_stamp()})
        socket.send_fds(conn, [request.encode() + b"\n"], [0, 1, 2])
        reader = conn.makefile("r", encoding="utf-8")
        first = json.loads(reader.readline() or "{}")
        if "pid" not in first:  # refused (stale code, busy): nothing started
            return None
        child = int(first["pid"])
        passed = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # to the command, which decides how to stop
        previous = {sig: signal.signal(sig, lambda sig, _: os.kill(child, sig)) for sig in passed}
        try:
            last = json.loads(reader.readline() or '{"exit": 1}')
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return int(last.get("exit", 1))
    except (OSError, ValueError):
        return None
    finally:
        conn.close()
