"""Delta's optimistic concurrency, explained: another writer committed to a model's table between the
snapshot this run read and its own commit.

The model's writer lock (:meth:`.warehouse.Warehouse.lock`) serializes our writers on one machine; a
second machine, a notebook or another engine writing the same folder can still win the race. Delta then
refuses our commit (nothing of it is visible) and the table holds the winner's version: the fix is to rerun.
"""

from __future__ import annotations

import re
from pathlib import Path

from delta.exceptions import base as delta_errors

from ..conditions import causes, spark_errors, without_condition
from ..errors import describe_exception
from ..storage.store import ObjectPath
from .delta_table import current_version

# Delta's error conditions -> delta-spark's exception class, and what happened, in words
CONFLICTS: dict[str, tuple[type[BaseException], str]] = {
    "DELTA_CONCURRENT_APPEND": (delta_errors.ConcurrentAppendException, "added data this run should have read"),
    "DELTA_CONCURRENT_DELETE_READ": (delta_errors.ConcurrentDeleteReadException, "deleted data this run read"),
    "DELTA_CONCURRENT_DELETE_DELETE": (delta_errors.ConcurrentDeleteDeleteException,
                                       "deleted data this run was deleting too"),
    "DELTA_METADATA_CHANGED": (delta_errors.MetadataChangedException,
                               "changed the table's metadata (its schema or properties)"),
    "DELTA_PROTOCOL_CHANGED": (delta_errors.ProtocolChangedException, "changed the table's protocol version"),
    "DELTA_CONCURRENT_WRITE": (delta_errors.ConcurrentWriteException, "wrote new data since this run read the table"),
    "DELTA_CONCURRENT_TRANSACTION": (delta_errors.ConcurrentTransactionException,
                                     "ran the same streaming query (the same checkpoint) into the table"),
}
_WINNER = re.compile(r"committed at version (\d+)|\(committed at version (\d+)\)")


def conflict_of(exc: BaseException) -> tuple[str, str] | None:
    """(Delta error condition, Delta's own sentence) when ``exc`` (or a cause of it) is a commit conflict.

    delta-spark's Python package converts Delta's conflicts into its own exception classes (on Spark
    Connect too) once it is imported, as it is here; an error no conversion reached (a call PySpark
    does not wrap) is recognised by its Spark error condition instead."""
    for inner in causes(exc):
        for condition, (kind, _) in CONFLICTS.items():
            if isinstance(inner, kind):
                said = without_condition(str(inner))
                return condition, said.splitlines()[0].strip() if said else condition
    for error in spark_errors(exc):
        if error.condition in CONFLICTS:
            return error.condition, error.message.splitlines()[0].strip() if error.message else error.condition
    return None


def conflict_message(model: str, table: Path | ObjectPath | None, exc: BaseException) -> str | None:
    """One message naming the model, its table, what the other writer did and the fix; None when ``exc``
    is no commit conflict."""
    found = conflict_of(exc)
    if found is None:
        return None
    error_class, delta_says = found
    where = f"its Delta table {table}" if table is not None else "its Delta table"
    winner = _WINNER.search(delta_says)
    at = next((g for g in winner.groups() if g), None) if winner else None
    now = current_version(table) if table is not None else None  # None: no readable log
    state = f"the table holds the other writer's version {now}" if now is not None else \
        "the table holds the other writer's version"
    if error_class == "DELTA_CONCURRENT_TRANSACTION":
        return (f"model {model}: two runs of its stream wrote {where} with the same checkpoint at once "
                f"(Delta {error_class}: {delta_says}); this run's micro-batch was not committed and {state}. "
                "Fix: run the stream from one place only (one `streamt run --continuous`, or one schedule), "
                "then rerun it: its checkpoint resumes where the table is")
    return (f"model {model}: another writer committed to {where}"
            f"{f' (version {at})' if at else ''} while this run was writing: it {CONFLICTS[error_class][1]} "
            f"(Delta {error_class}: {delta_says}). This run committed nothing and {state}. "
            f"Fix: rerun the model (`streamt run -s {model}`); if a second machine, schedule or notebook writes this "
            "table, let one writer own it (our per-model lock only serializes writers on one machine)")


def model_error(name: str, exc: BaseException, table: Path | ObjectPath | None = None) -> str:
    """:func:`describe_exception`, prefixed with ``model <name>:`` unless the message already names it; a
    Delta commit conflict on the model's ``table`` is explained with its fix (:func:`conflict_message`)."""
    conflict = conflict_message(name, table, exc)
    if conflict is not None:
        return conflict
    message = describe_exception(exc)
    if not message.startswith(f"model {name}") and f" {name}" not in message.split(":")[0]:
        message = f"model {name}: {message}"
    return message
