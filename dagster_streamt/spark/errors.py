"""Errors the Spark layer raises on purpose, and turning Spark's own errors into one clear line.

Spark errors carry JVM stack traces and logical plans; users need the first line that says what
went wrong, plus a fix when we know one (a missing connector jar, an incompatible checkpoint).
"""

from __future__ import annotations

import re

from ..jars import sets

# Connector packages Spark does not bundle, by format, for the `spark.jars.packages` hint (from jars.sets).
PACKAGE_HINTS: dict[str, str] = {
    "kafka": sets.kafka().packages[0],
    "avro": sets.kafka().packages[1],
    "delta": f"{sets.delta().packages[0]} (`streamt jars fetch delta` caches it)",
}
_NOISE = re.compile(
    r"^(An error occurred while calling|JVM stacktrace:|Traceback|\tat |at |=== Streaming Query ===|py4j\.)"
)
_TERMINATED = re.compile(r"terminated with exception: (.*)", re.S)
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\s*$")
_MISSING_SOURCE = re.compile(
    r"Failed to find (?:the )?data source:?\s*`?(\w+(?:\.\w+)*)|DATA_SOURCE_NOT_FOUND|DATA_SOURCE_NOT_ENABLED", re.I)
MAX_MESSAGE = 600
# errors that only say where another one happened (a task of Delta's writer, say): the cause is the news
_WRAPPERS = ("[TASK_WRITE_FAILED]",)
_CAUSE = re.compile(r"^\s*Caused by: [\w.$]+: (.+)$", re.M)


class StreamtSparkError(Exception):
    """Base class: a problem we can explain in one message (no traceback needed)."""


class SparkSetupError(StreamtSparkError):
    """The machine or session configuration prevents Spark from running (Java, jars, server)."""


class ModelRunError(StreamtSparkError):
    """A model could not run because of its data, SQL or configuration; the message says the fix."""

    def __init__(self, message: str, model: str | None = None) -> None:
        super().__init__(message)
        self.model = model


def first_meaningful_line(exc: BaseException) -> str:
    """The line of a (possibly JVM) error that says what went wrong, without plans or stacks; for an
    error that only wraps another (:data:`_WRAPPERS`), the first cause that does not."""
    line = _meaningful(str(exc) or type(exc).__name__) or type(exc).__name__
    if not line.startswith(_WRAPPERS):
        return line
    from .conditions import causes  # imports pyspark: not for the Python-only callers of this module

    found_causes = [str(c) for c in causes(exc)[1:]]  # pyspark's captured JVM errors keep their cause chain
    # or a printed JVM stack trace names it (pyspark keeps it apart from the message when its debug is off)
    found_causes += _CAUSE.findall(f"{exc}\n{getattr(exc, '_stackTrace', '') or ''}")
    for cause in found_causes:
        found = _meaningful(cause)
        if found and not found.startswith(_WRAPPERS):
            return f"{found} ({line.split(']')[0].lstrip('[')})"[:MAX_MESSAGE]
    return line


def _meaningful(text: str) -> str | None:
    m = _TERMINATED.search(text)
    if m:
        text = m.group(1)
    for raw in text.splitlines():
        line = raw.strip().lstrip(":").strip()
        if not line or _NOISE.match(line):
            continue
        line = _SQLSTATE.sub("", line)
        line = re.sub(r"^(java\.lang\.AssertionError: )?assertion failed: ", "", line)
        line = re.sub(r"^(org\.apache\.spark\.[\w.]+|java\.[\w.]+)(Exception|Error): ", "", line)
        return line[:MAX_MESSAGE]
    return None


def missing_format(exc: BaseException) -> str | None:
    """The data source format named by a 'data source not found' error, else None."""
    m = _MISSING_SOURCE.search(str(exc))
    if not m:
        return None
    fm = m if m.group(1) else re.search(r"data source:?\s*`?(\w+(?:\.\w+)*)", str(exc), re.I)
    if fm is None:
        return "unknown"
    name = fm.group(1).rsplit(".", 1)[-1].lower()  # org.apache.spark.sql.avro.AvroFileFormat -> avro
    return name.removesuffix("fileformat").removesuffix("sourceprovider") or "unknown"


def missing_format_hint(fmt: str) -> str:
    package = PACKAGE_HINTS.get(fmt, "<the connector's Maven coordinates>")
    if fmt in ("kafka", "avro"):
        return (f"Spark has no data source for format {fmt!r} on its classpath: a project with "
                "runtime.kafka.bootstrap_servers gets Spark's Kafka and Avro connectors (`streamt jars fetch kafka`) "
                f"unless runtime.spark.jars is `provided` (or add `spark.jars.packages: \"{package}\"` to "
                "runtime.spark.conf)")
    return (f"Spark has no data source for format {fmt!r} on its classpath; add it to "
            f"runtime.spark.conf in stream_project.yml, e.g. `spark.jars.packages: \"{package}\"` "
            "(or `spark.jars:` with a local jar path), then start a new session")


def describe_exception(exc: BaseException) -> str:
    """One clear line for any exception, with a fix appended when the cause is a known setup gap."""
    if isinstance(exc, StreamtSparkError):
        return str(exc)
    fmt = missing_format(exc)
    if fmt:
        return missing_format_hint(fmt)
    return first_meaningful_line(exc)
