"""How a file export names its versions, locally and on an object store: when, a unique id, and for a
stream the checkpoint's query id and the last micro-batch the version holds.

The name is the export's record of which batch it holds: written with the data it names, so a batch
Spark replays after a crash is recognised atomically with the publish. No pyspark import here:
``streamt validate`` and the no-JVM rerun check read these names too.
"""

from __future__ import annotations

import re
import time
import uuid

VERSION_PREFIX = "v="
STREAM_VERSION = re.compile(r"-q(?P<query>[0-9a-f]{8})-b(?P<batch>\d+)$")


def version_name(query: str | None = None, batch: int | None = None) -> str:
    """A new version's name; a stream's carries its query id (8 hex digits) and batch.

    >>> version_name("0123456789abcdef", 7)[-24:]
    '-q01234567-b000000000007'
    """
    name = f"{VERSION_PREFIX}{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"
    if query is not None and batch is not None:
        name += f"-q{query[:8]}-b{batch:012d}"
    return name


def stream_mark(name: str) -> tuple[str, int] | None:
    """(query id prefix, batch) of a stream's version name; None for a snapshot's.

    >>> stream_mark("v=20261128T120000-abcdef01-q01234567-b000000000007")
    ('01234567', 7)
    """
    m = STREAM_VERSION.search(name)
    return (m.group("query"), int(m.group("batch"))) if m else None
