"""`kill -9` of a whole `streamt run` process group at a chosen moment, for the crash tests."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def group_members(pgid: int) -> list[tuple[int, str]]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
        if int(rest[2]) == pgid and rest[0] != "Z":
            out.append((int(stat.parent.name), comm))
    return out


def kill_group_when(proc: subprocess.Popen[str], ready: Callable[[], bool], timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"the run ended before the kill point:\n{proc.communicate()[0][-3000:]}"
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not group_members(proc.pid), f"survivors of kill -9: {group_members(proc.pid)}"
