"""Whether a process is alive, for the background processes the product starts on request (the
project's Spark server and its keeper, a local Kafka broker). Standard library only."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists (a process of another user counts: signalling it is refused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
