"""TEST HOOK, inert in normal use: lets the crash tests ``kill -9`` a run at an exact point.

When ``STREAMT_TEST_PAUSE_AT`` lists a point (comma-separated) and ``STREAMT_TEST_PAUSE_DIR`` names a
folder, :func:`pause_point` writes ``<dir>/<point>`` and then sleeps until the process is killed. Points:
``table-swap`` (a table version is written, ``_CURRENT`` not yet swapped), ``export-swap`` (a file
export version is complete, the path not yet swapped), ``jdbc-commit`` (a JDBC sink's transaction has
run its statements, not yet committed). Without the variables it returns at once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PAUSE_AT = "STREAMT_TEST_PAUSE_AT"
PAUSE_DIR = "STREAMT_TEST_PAUSE_DIR"


def pause_point(name: str) -> None:
    points = os.environ.get(PAUSE_AT)
    if not points or name not in points.split(","):
        return
    folder = Path(os.environ.get(PAUSE_DIR) or ".")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(str(os.getpid()), encoding="utf-8")
    while True:  # until kill -9
        time.sleep(1)
