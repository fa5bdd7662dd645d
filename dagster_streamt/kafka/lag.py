"""Consumer lag of the stream queries that read a project's Kafka sources, without Spark or Dagster.

Spark's Kafka source commits no consumer-group offsets: a query's position lives in its Structured
Streaming checkpoint. ``<checkpoint>/offsets/<n>`` (the write-ahead log) holds, for batch ``n``, the
offsets each source reads up to (exclusive), one line per source in the order of the plan's sources
after a version line and a metadata line; ``<checkpoint>/commits/<n>`` marks batch ``n`` finished.
A query has consumed a topic up to the offsets of its last *committed* batch, so its lag is the
topic's end offsets (from the broker, :func:`~dagster_streamt.kafka.admin.end_offsets`) minus those.

A Kafka offset line is ``{"<topic>":{"<partition>":<offset>,...},...}``; several Kafka sources of one
query are told apart by their topic names, so neither the line order nor other sources' offsets (a
file source's ``{"logOffset":3}``) matter. A source read only in batch (table models, or a stream
joining it as a static table) has no checkpoint position and no lag.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..core.ids import kind_of, node_id
from ..graph.streams import stream_readers
from ..spark.storage.paths import REAL_TIME_SUFFIX, ProjectPaths, logged_batches
from ..spark.storage.store import Loc
from ..spec.kafka import librdkafka_options
from .admin import KafkaAdminError, end_offsets, list_topics, start_offsets

if TYPE_CHECKING:
    from ..core.loaded import LoadedProject
    from ..spec.models import Source
    from ..spec.project import Project

TIMEOUT = 10.0  # seconds to wait for a broker that does not answer: a status command must not hang
QUARANTINE = "__quarantine"  # a quarantine query checkpoint: <source>__quarantine (spark/sources/quarantine.py)

Offsets = dict[str, dict[int, int]]  # topic -> partition -> offset
Mode = Literal["stream", "batch", "local", "none"]


@dataclass(frozen=True)
class Position:
    """What a checkpoint has committed: the batch and, per topic it reads, the partition offsets."""

    batch: int
    offsets: Offsets


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    end_offset: int
    committed: int | None  # None: the query has not read this partition yet (new partition)
    lag: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReaderLag:
    """One query reading the source: a stream model (or the source's quarantine query)."""

    reader: str
    checkpoint: str
    batch: int | None  # its last committed batch; None: it never finished one
    partitions: tuple[PartitionLag, ...] = ()

    @property
    def total(self) -> int | None:
        """Records it has still to read; None when it never ran."""
        return None if self.batch is None else sum(p.lag for p in self.partitions)

    def to_dict(self) -> dict[str, Any]:
        return {"reader": self.reader, "checkpoint": self.checkpoint, "batch": self.batch, "lag": self.total,
                "partitions": [p.to_dict() for p in self.partitions]}


@dataclass(frozen=True)
class SourceLag:
    """A Kafka source: its topics' offsets and the lag of each query that streams it.

    ``mode``: ``stream`` (stream models read it), ``batch`` (only table models: no lag), ``local``
    (``runtime.kafka.local_dir``: topics are folders, no offsets), ``none`` (no model reads it)."""

    source: str
    topics: tuple[str, ...]
    mode: Mode
    end_offsets: Offsets = field(default_factory=dict)
    start_offsets: Offsets = field(default_factory=dict)
    readers: tuple[ReaderLag, ...] = ()
    error: str | None = None  # this source's topic could not be read (e.g. it does not exist)

    @property
    def lag(self) -> int | None:
        """The largest lag among its readers that ran (the one furthest behind); None if none ran."""
        totals = [r.total for r in self.readers if r.total is not None]
        return max(totals) if totals else None

    @property
    def messages(self) -> int:
        """Records the topics hold now (end minus start offsets; approximate on compacted topics)."""
        return sum(end - self.start_offsets.get(t, {}).get(p, 0)
                   for t, parts in self.end_offsets.items() for p, end in parts.items())

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "topics": list(self.topics), "mode": self.mode, "lag": self.lag,
                "messages": self.messages if self.end_offsets else None,
                "end_offsets": offsets_json(self.end_offsets), "readers": [r.to_dict() for r in self.readers],
                "error": self.error}


def offsets_json(offsets: Mapping[str, Mapping[int, int]]) -> dict[str, dict[str, int]]:
    """``{topic: {"0": offset}}`` with sorted topics and partitions (JSON keys are strings)."""
    return {t: {str(p): offsets[t][p] for p in sorted(offsets[t])} for t in sorted(offsets)}


# --- the checkpoint ------------------------------------------------------------------------------------

def _topic_offsets(value: Any, topic: str) -> dict[int, int] | None:
    """The partition offsets of ``topic`` in one source's offset JSON (searched through nested maps
    and JSON strings, so a log that wraps each source's offset still matches), else None."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    parts = value.get(topic)
    if isinstance(parts, dict) and parts and all(str(k).lstrip("-").isdigit() and isinstance(v, int)
                                                 for k, v in parts.items()):
        return {int(k): int(v) for k, v in parts.items()}
    for inner in value.values():
        found = _topic_offsets(inner, topic)
        if found is not None:
            return found
    return None


def read_offsets(path: Loc) -> list[Any]:
    """The source offsets of one ``offsets/<n>`` file, in source order: parsed JSON, or None for a
    source without an offset yet (Spark writes ``-``). The version and metadata lines are skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("v"):
        raise ValueError(f"{path} is not a Structured Streaming offset log file (no version line)")
    out: list[Any] = []
    for i, line in enumerate(lines[1:]):
        line = line.strip()
        if line == "-":
            out.append(None)
            continue
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = line  # a source whose offset is not JSON (kept as text, never a Kafka offset)
        if i == 0 and isinstance(value, dict) and "batchWatermarkMs" in value:
            continue  # the batch metadata (watermark, timestamp, session conf)
        out.append(value)
    return out


def committed_position(checkpoint: Loc, topics: Iterable[str]) -> Position | None:
    """The offsets of ``topics`` as of the checkpoint's last committed batch; None when no batch was
    ever committed. Topics the query does not stream are missing from ``offsets`` (several sources on
    one topic: the smallest offset per partition, the reader furthest behind)."""
    done = logged_batches(checkpoint / "commits") & logged_batches(checkpoint / "offsets")
    if not done:
        return None
    batch = max(done)
    sources = read_offsets(checkpoint / "offsets" / str(batch))
    offsets: Offsets = {}
    for topic in topics:
        for value in sources:
            found = _topic_offsets(value, topic)
            if found is None:
                continue
            mine = offsets.setdefault(topic, {})
            for p, o in found.items():
                mine[p] = min(o, mine.get(p, o))
    return Position(batch, offsets)


def reader_lag(reader: str, checkpoint: Loc, end: Offsets, start: Offsets | None = None) -> ReaderLag | None:
    """Lag of the query checkpointed in ``checkpoint`` against the topics' ``end`` offsets; None when it
    ran but streams none of these topics (it reads them in batch). A partition it has no offset for
    (added after its last batch) counts from its ``start`` offset, where Spark begins new partitions."""
    position = committed_position(checkpoint, end)
    if position is None:
        return ReaderLag(reader, str(checkpoint), None)
    if not position.offsets:
        return None
    rows = []
    for topic in sorted(position.offsets):
        done = position.offsets[topic]
        first = (start or {}).get(topic, {})
        for p in sorted(end[topic]):
            committed = done.get(p)
            base = committed if committed is not None else first.get(p, 0)
            rows.append(PartitionLag(topic, p, end[topic][p], committed, max(end[topic][p] - base, 0)))
    return ReaderLag(reader, str(checkpoint), position.batch, tuple(rows))


# --- the project --------------------------------------------------------------------------------------

def source_topics(source: Source) -> tuple[str, ...]:
    """The topics a Kafka source reads: ``topic:``, else the ``subscribe`` option's list."""
    if source.topic:
        return (source.topic,)
    return tuple(t.strip() for t in source.options.get("subscribe", "").split(",") if t.strip())


def kafka_sources(project: Project) -> list[Source]:
    return [s for _, s in sorted(project.sources.items()) if s.resolved_format == "kafka" and source_topics(s)]


def broker_settings(project: Project) -> tuple[str, dict[str, Any]] | None:
    """(bootstrap servers, librdkafka settings) of the project's broker; None without one (no
    ``runtime.kafka``, or topics as local folders)."""
    kafka = project.runtime.kafka
    if kafka is None or kafka.local_dir is not None or not kafka.bootstrap_servers:
        return None
    conf: dict[str, Any] = dict(librdkafka_options(kafka, project.root))
    return str(conf.pop("bootstrap.servers", kafka.bootstrap_servers)), conf


def check_broker(bootstrap: str, conf: Mapping[str, Any], timeout: float = TIMEOUT) -> None:
    """Raise :class:`KafkaAdminError` unless the broker answers within ``timeout`` seconds. When no
    bootstrap address accepts a connection at all (nothing listens), that is said at once instead of
    after the client's retries for ``timeout`` seconds."""
    refused = []
    for address in [a.strip() for a in bootstrap.split(",") if a.strip()]:
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]") or "localhost", int(port)), timeout=min(timeout, 3.0)):
                break
        except ConnectionRefusedError:
            refused.append(address)
        except (OSError, ValueError):
            break  # unreachable or unresolvable here: the client's own error says more
    else:
        if refused:
            raise KafkaAdminError(f"could not list the topics of {bootstrap}: connection refused by "
                                  f"{', '.join(refused)}")
    list_topics(bootstrap, conf=conf, timeout=timeout)


def source_lag(loaded: LoadedProject, source: Source, bootstrap: str, conf: Mapping[str, Any],
               timeout: float = TIMEOUT) -> SourceLag:
    """One Kafka source's offsets and readers' lag. A missing topic is this source's ``error``; an
    unreachable broker raises :class:`KafkaAdminError` (check it once with :func:`check_broker`)."""
    topics = source_topics(source)
    streams = stream_readers(loaded.graph, loaded.project.models, source.name)
    batch = any(kind_of(d) == "model" for d in loaded.graph.downstream_of(node_id("source", source.name)))
    mode: Mode = "stream" if streams else ("batch" if batch else "none")
    try:
        end = {t: end_offsets(bootstrap, t, conf=conf, timeout=timeout) for t in topics}
        start = {t: start_offsets(bootstrap, t, conf=conf, timeout=timeout) for t in topics}
    except KafkaAdminError as exc:
        if "does not exist" not in str(exc):
            raise
        return SourceLag(source.name, topics, mode, error=str(exc))
    paths = ProjectPaths.from_project(loaded.project)
    readers = [(m, paths.checkpoint(m)) for m in streams]
    # a model in Spark's Real-time Mode reads the topic with a checkpoint of its own (spark/streams/realtime.py)
    readers += [(f"{m} (real-time)", cp) for m in streams if (cp := paths.checkpoint(m + REAL_TIME_SUFFIX)).is_dir()]
    quarantine = paths.checkpoint(f"{source.name}{QUARANTINE}")
    if quarantine.is_dir():
        readers.append((f"{source.name} (quarantine)", quarantine))
    found = [r for name, cp in readers if (r := reader_lag(name, cp, end, start)) is not None]
    return SourceLag(source.name, topics, mode, end, start, tuple(found))


def project_lag(loaded: LoadedProject, names: Iterable[str] | None = None,
                timeout: float = TIMEOUT) -> list[SourceLag]:
    """Every Kafka source of the project (or those in ``names``), sorted by name. Raises
    :class:`KafkaAdminError` once when the broker does not answer."""
    wanted = None if names is None else set(names)
    sources = [s for s in kafka_sources(loaded.project) if wanted is None or s.name in wanted]
    if not sources:
        return []
    broker = broker_settings(loaded.project)
    if broker is None:
        return [SourceLag(s.name, source_topics(s), "local") for s in sources]
    bootstrap, conf = broker
    check_broker(bootstrap, conf, timeout)
    return [source_lag(loaded, s, bootstrap, conf, timeout) for s in sources]
