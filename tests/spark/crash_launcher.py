"""``streamt`` paused at one named point, for the crash test (tests/spark/test_sink_crash.py).

Usage: ``python -m tests.spark.crash_launcher POINT MARKER_DIR run -p PROJECT ...``. The test starts
this as the ``streamt`` process and ``kill -9``s its process group once ``MARKER_DIR/POINT`` appears.
The pause is injected here, from the test side, by wrapping the product function that runs next at
that point (the product itself has no hook); then the real command line runs.

Points: ``state-merged`` (an aggregation table's state has taken the appended rows in its append
commit; the table's own commit, which records that state version, is not written yet:
``table_state.Merge.apply``), ``export-swap`` (a file export version is complete, the path not yet swapped:
``FileExport._swap``), ``jdbc-commit`` (a JDBC sink's transaction has run the statements that publish,
not yet committed: ``Connection.commit`` after ``_publish``), ``kafka-commit`` (a batch's records are in an
open Kafka transaction, not yet committed: ``commit_transaction``), ``kafka-committed`` (the transaction with
the batch and its id has committed; Spark has not yet recorded the batch in its checkpoint).
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from pathlib import Path
from typing import Any

from dagster_streamt.kafka import transactions
from dagster_streamt.spark.delta import table_state
from dagster_streamt.spark.sinks import export_files, jdbc_sink, jdbc_tx

POINTS = ("state-merged", "export-swap", "jdbc-commit", "kafka-commit", "kafka-committed")


def pause(folder: Path, point: str) -> None:
    """Say where we are (``<folder>/<point>`` holds the pid), then wait for the kill."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / point).write_text(str(os.getpid()), encoding="utf-8")
    while True:
        time.sleep(1)


def install(point: str, folder: Path) -> None:
    """Wrap the function that runs right after ``point`` so that it pauses first."""
    if point == "state-merged":
        apply = table_state.Merge.apply

        def merged(self: table_state.Merge, compact: bool) -> dict[str, int]:
            versions = apply(self, compact)
            pause(folder, point)
            return versions

        table_state.Merge.apply = merged  # type: ignore[method-assign]
    elif point == "export-swap":
        swap = export_files.FileExport._swap

        def _swap(self: export_files.FileExport, new: Path) -> None:
            pause(folder, point)
            swap(self, new)

        export_files.FileExport._swap = _swap  # type: ignore[method-assign]
    elif point == "jdbc-commit":
        publish, commit = jdbc_sink._publish, jdbc_tx.Connection.commit
        published: weakref.WeakSet[jdbc_tx.Connection] = weakref.WeakSet()

        def _publish(conn: jdbc_tx.Connection, *args: Any, **kwargs: Any) -> None:
            publish(conn, *args, **kwargs)
            published.add(conn)

        def _commit(self: jdbc_tx.Connection) -> None:
            if self in published:  # a transaction that publishes rows, not a look at the batch ledger
                pause(folder, point)
            commit(self)

        jdbc_sink._publish = _publish  # type: ignore[assignment]
        jdbc_tx.Connection.commit = _commit  # type: ignore[method-assign]
    elif point in ("kafka-commit", "kafka-committed"):
        producer_class = transactions.Producer

        class Paused:
            """The transactional producer, pausing around its first commit that carries records."""

            def __init__(self, conf: dict[str, Any]) -> None:
                self._producer, self._sent = producer_class(conf), 0

            def __getattr__(self, name: str) -> Any:
                return getattr(self._producer, name)

            def produce(self, *args: Any, **kwargs: Any) -> None:
                self._producer.produce(*args, **kwargs)
                self._sent += 1

            def commit_transaction(self, *args: Any) -> None:
                if self._sent and point == "kafka-commit":
                    pause(folder, point)
                self._producer.commit_transaction(*args)
                if self._sent and point == "kafka-committed":
                    pause(folder, point)

        transactions.Producer = Paused  # type: ignore[assignment,misc]
    else:
        raise SystemExit(f"unknown pause point {point!r}; one of {', '.join(POINTS)}")


def main(argv: list[str]) -> None:
    point, folder, *args = argv
    install(point, Path(folder))
    from dagster_streamt.cli.main import main as streamt

    sys.argv = ["streamt", *args]
    streamt()


if __name__ == "__main__":
    main(sys.argv[1:])
