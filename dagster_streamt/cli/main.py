"""The ``streamt`` command. Exit codes: 0 ok, 1 validation errors, 2 usage errors.

Each subcommand imports what it needs lazily so that lineage questions answer without importing
Spark or Dagster.
"""

from __future__ import annotations

import logging
import sqlite3
import sys

import click

from .. import __version__
from .backfill_cmd import backfill
from .compile_cmd import compile_
from .diff_cmd import diff
from .docs_cmd import docs
from .init_cmd import init
from .jars_cmd import jars
from .kafka_cmd import kafka
from .lineage_cmd import lineage
from .observe_cmd import observe
from .plan_cmd import plan
from .restore_cmd import restore
from .run_cmd import run
from .server_cmd import server
from .status_cmd import status
from .test_cmd import test
from .vacuum_cmd import vacuum
from .validate_cmd import validate


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="streamt")
def cli() -> None:
    """dagster-streamt: declarative SQL pipelines on Spark, orchestrated by Dagster."""
    _quiet_sqlite_finalizer()


def _drop_cross_thread_cleanup(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    return not (isinstance(exc, sqlite3.ProgrammingError) and "created in a thread" in str(exc))


def _quiet_sqlite_finalizer() -> None:
    """A SQLite connection of the Dagster instance that Python's garbage collector finalizes on another
    thread than the one that opened it makes SQLAlchemy's pool log a traceback ("SQLite objects created
    in a thread can only be used in that same thread") while it closes it anyway. Nothing is lost, so
    that one message is dropped rather than shown to the user; every other pool error still shows."""
    pool = logging.getLogger("sqlalchemy.pool.impl.NullPool")
    if _drop_cross_thread_cleanup not in pool.filters:
        pool.addFilter(_drop_cross_thread_cleanup)


for command in (init, validate, compile_, lineage, diff, plan, run, backfill, status, observe, test, server, docs,
                kafka, jars, restore, vacuum):
    cli.add_command(command)


# the cyclic garbage collector's thresholds for a process that imports Dagster and Spark (see main)
GC_THRESHOLDS = (50_000, 10, 10)


def main() -> None:
    """The ``streamt`` console script. Once the command has finished and its output is flushed, the
    process ends at once: tearing down the interpreter (Dagster, pyspark, sqlglot modules and their
    objects) costs about half a second of every command and has nothing left to do.

    The cyclic garbage collector runs less often than Python's default (every 50,000 net allocations
    instead of 700): a command imports Dagster, pyspark and sqlglot, hundreds of thousands of long-lived
    objects that each collection scanned again; with the default, collections took 0.3 s of a 1.8 s
    ``streamt run`` that had nothing to do. Reference counting still frees everything that is not a cycle."""
    import gc
    import os
    import warnings

    gc.set_threshold(*GC_THRESHOLDS)

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    try:
        cli(prog_name="streamt")
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    server = sys.modules.get("dagster_streamt.spark.session.project_server")
    if server is not None:  # os._exit skips atexit: release the project server's lease here
        server.on_exit()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _exit_code(code: object) -> int:
    """What ``sys.exit(code)`` would make of it: ints as they are, None 0, anything else printed, 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
