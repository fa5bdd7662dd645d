"""Spark's error conditions of an exception and of the exceptions it wraps: what the package decides on
(a commit conflict, a schema it cannot infer) instead of the wording of a message.

PySpark converts a JVM error it knows (an ``AnalysisException``) with its condition, but hands others
(Delta's ``ConcurrentAppendException``) over as an ``UnknownException`` without one, or unconverted as a
``Py4JJavaError`` from a call it does not wrap. For those the condition is read from the JVM error
itself (``SparkThrowable.getCondition``), down its chain of causes. On Spark Connect every error carries
its condition. Importing delta-spark's exceptions (here, so before any run) makes PySpark convert Delta's
commit conflicts to delta-spark's own classes, whatever else the process imports
(:mod:`.delta.conflicts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import delta.exceptions  # noqa: F401 - installs delta-spark's conversion of Delta's conflicts
from py4j.protocol import Py4JError, Py4JJavaError  # type: ignore[import-untyped]
from pyspark.errors import PySparkException


@dataclass(frozen=True)
class SparkError:
    """One error of a chain: its condition (``DELTA_CONCURRENT_APPEND``, without a sub-condition) and
    its message (without the ``[CONDITION]`` prefix)."""

    condition: str
    message: str


def cause_of(exc: BaseException) -> BaseException | None:
    """The exception ``exc`` wraps: Python's chain, or the JVM cause pyspark's captured errors convert."""
    inner = getattr(exc, "_cause", None) or getattr(exc, "cause", None) or exc.__cause__
    return inner if isinstance(inner, BaseException) else None


def causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it wraps, outermost first (a stream's failure wraps its micro-batch's)."""
    chain: list[BaseException] = []
    inner: BaseException | None = exc
    while inner is not None and inner not in chain and len(chain) < 10:
        chain.append(inner)
        inner = cause_of(inner)
    return chain


def without_condition(text: str) -> str:
    """An error's message without the ``[CONDITION.SUB]`` it starts with, if it does."""
    text = text.strip()
    return text.split("]", 1)[1].strip() if text.startswith("[") and "]" in text else text


def _jvm_errors(error: Any) -> list[SparkError]:
    """The conditions of a JVM throwable and its causes (those that are ``SparkThrowable``)."""
    found: list[SparkError] = []
    for _ in range(10):
        if error is None:
            break
        try:
            condition = error.getCondition()  # only a SparkThrowable has it
            message = str(error.getMessage()) if condition else ""
            cause = error.getCause()
        except Py4JError:
            condition, message, cause = None, "", None
        if condition:
            found.append(SparkError(str(condition).split(".")[0], without_condition(message)))
        error = cause
    return found


def _condition(exc: PySparkException) -> str | None:
    try:  # a captured error asks the JVM, which may refuse (a message template it cannot fill)
        return exc.getCondition()
    except (Py4JError, PySparkException):
        return None


def spark_errors(exc: BaseException) -> list[SparkError]:
    """The errors with a condition in ``exc``'s chain, outermost first."""
    found: list[SparkError] = []
    for inner in causes(exc):
        if isinstance(inner, Py4JJavaError):
            found += _jvm_errors(inner.java_exception)
        elif isinstance(inner, PySparkException):
            condition = _condition(inner)
            if condition:
                found.append(SparkError(condition.split(".")[0], without_condition(str(inner))))
    return found


def conditions(exc: BaseException) -> list[str]:
    """The Spark error conditions of ``exc`` and its causes, outermost first."""
    return [e.condition for e in spark_errors(exc)]
