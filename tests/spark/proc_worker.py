"""Run models in a fresh Python process (own JVM, or a Spark Connect client) and print JSON lines.

Usage: python -m tests.spark.proc_worker PROJECT_DIR GO_FILE|- MODEL...
Prints ``{"ready": ...}`` once the session is up, waits for GO_FILE (to overlap with another
process), runs the models, then prints ``{"results": ...}``; a Connect client also reconnects once.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from dagster_streamt.spark import create_session, is_connect, stop_session

from ..conftest import load
from .helpers import run


def main(argv: list[str]) -> None:
    root, go, names = Path(argv[1]), argv[2], argv[3:]
    project = load(root)
    start = time.monotonic()
    spark = create_session(project)
    print(json.dumps({"ready": time.monotonic() - start, "connect": is_connect(spark)}), flush=True)
    while go != "-" and not Path(go).exists():
        time.sleep(0.05)
    results = run(spark, project, names)
    print(json.dumps({"results": {n: [r.status, r.rows_written, r.error] for n, r in results.items()}}), flush=True)
    if is_connect(spark):
        spark.stop()
        start = time.monotonic()
        again = create_session(project)  # the server is already listening: reused, not restarted
        rows = again.sql("SELECT 1 AS one").collect()[0]["one"]
        print(json.dumps({"reconnect": time.monotonic() - start, "one": rows}), flush=True)
        again.stop()
    else:
        stop_session(spark)


if __name__ == "__main__":
    main(sys.argv)
