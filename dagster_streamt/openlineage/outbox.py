"""A durable, ordered outbox of OpenLineage events for one transport ("leg"), in plain files.

Lineage must survive a backend outage and a crash: events are appended (and fsynced) to a JSON-lines
segment before any send, and leave it only when delivered. Files under the state directory::

    <leg>.<segment>.jsonl   pending events, oldest first; delivered ones sit before ``offset``
    <leg>.state.json        {segment, offset, failures, last_error, next_attempt_at, delivered_total}
    <leg>.rejected.jsonl    events the backend refused as malformed (kept for inspection)
    <leg>.queue.lock        held briefly by appenders and by the compaction
    <leg>.drain.lock        held by the one process sending; others skip the send, not the append

Only the drain-lock holder writes the state file. A crash between a send and the offset update
resends that one event (at-least-once); nothing is ever dropped. A fully delivered segment is
retired by moving the state to the next segment first and deleting the old file second, so a crash
in between leaves garbage, never a lost or repeated event.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.files import atomic_write


@dataclass
class LegState:
    segment: int = 0
    offset: int = 0  # bytes of the segment already delivered
    failures: int = 0  # consecutive failed attempts
    last_error: str | None = None
    next_attempt_at: float = 0.0  # epoch seconds; no send before (unless forced)
    delivered_total: int = 0
    rejected_total: int = 0


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "default"


@contextlib.contextmanager
def _flock(path: Path, blocking: bool = True) -> Iterator[bool]:
    """An exclusive ``flock``; yields False (and holds nothing) when non-blocking and taken."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class Outbox:
    def __init__(self, state_dir: str | Path, leg: str) -> None:
        self.dir = Path(state_dir)
        self.leg = _safe(leg)

    # -- files -----------------------------------------------------------------------------------
    def segment_path(self, segment: int) -> Path:
        return self.dir / f"{self.leg}.{segment}.jsonl"

    @property
    def state_path(self) -> Path:
        return self.dir / f"{self.leg}.state.json"

    @property
    def rejected_path(self) -> Path:
        return self.dir / f"{self.leg}.rejected.jsonl"

    def read_state(self) -> LegState:
        try:
            return LegState(**json.loads(self.state_path.read_text(encoding="utf-8")))
        except (FileNotFoundError, ValueError, TypeError):
            return LegState()

    def write_state(self, state: LegState) -> None:
        """Atomic replace, no fsync: losing an update can only resend an event, never drop one."""
        atomic_write(self.state_path, json.dumps(asdict(state), sort_keys=True))

    # -- producers -------------------------------------------------------------------------------
    def append(self, lines: list[str]) -> None:
        """Append events (one JSON document each, no newline inside) durably, in order."""
        if not lines:
            return
        with _flock(self.dir / f"{self.leg}.queue.lock"):
            path = self.segment_path(self.read_state().segment)
            data = "".join(line + "\n" for line in lines).encode("utf-8")
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)

    # -- the sender ------------------------------------------------------------------------------
    def draining(self) -> contextlib.AbstractContextManager[bool]:
        """Hold the send lock; yields False when another process is sending right now."""
        return _flock(self.dir / f"{self.leg}.drain.lock", blocking=False)

    def pending(self, state: LegState) -> Iterator[tuple[int, str]]:
        """(end offset, line) of every complete undelivered line; a line still being written is skipped."""
        path = self.segment_path(state.segment)
        try:
            fh = path.open("rb")
        except FileNotFoundError:
            return
        with fh:
            fh.seek(state.offset)
            offset = state.offset
            for raw in fh:
                if not raw.endswith(b"\n"):
                    return
                offset += len(raw)
                yield offset, raw.decode("utf-8").rstrip("\n")

    def count_pending(self, state: LegState | None = None) -> int:
        return sum(1 for _ in self.pending(state or self.read_state()))

    def reject(self, line: str) -> None:
        with self.rejected_path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def retire_if_done(self, state: LegState) -> LegState:
        """Start a new segment once everything in the current one is delivered (drain lock held)."""
        with _flock(self.dir / f"{self.leg}.queue.lock"):
            path = self.segment_path(state.segment)
            size = path.stat().st_size if path.exists() else 0
            if state.offset < size or size == 0:
                return state
            state.segment, state.offset = state.segment + 1, 0
            self.write_state(state)
            path.unlink(missing_ok=True)
            for old in self.dir.glob(f"{self.leg}.*.jsonl"):  # leftovers of a crash mid-retire
                seg = old.name[len(self.leg) + 1:-len(".jsonl")]
                if seg.isdigit() and int(seg) < state.segment:
                    old.unlink(missing_ok=True)
        return state
