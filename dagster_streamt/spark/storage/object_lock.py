"""A writer lock that is an object in the bucket, for tables and checkpoints on S3.

Why: two drivers on two machines share no disk, so a lock file on the driver's disk keeps apart only the
runs of one machine; and Delta's default S3 log store assumes one writer per table (two drivers
committing at once may both write version N, the later one erasing the other's commit). The lock has
to live where both drivers look: the bucket.

How, with S3's conditional writes (2024; MinIO and moto have them too):

* **take**: one PUT with ``If-None-Match: *``. Of two drivers creating the object at once, the store
  lets exactly one succeed; the other gets 412.
* **hold**: a lease. The holder renews it every third of ``ttl_s`` (a PUT with ``If-Match`` on its own
  ETag), so a run of any length keeps it, and a driver that died (``kill -9``, a lost machine) stops
  renewing it.
* **take over**: a lease not renewed for ``ttl_s`` is stale, judged by the store's clock (the
  object's ``Last-Modified`` against the ``Date`` of the answer), so clocks of drivers need not agree.
  So is one whose holder was a process of this machine that is gone, without waiting for the ttl.
  A stale lease is removed with a ``DELETE`` conditional on the ETag that was read, so of two drivers
  taking it over, one wins and the other waits again.
* **release**: a ``DELETE`` conditional on the holder's ETag.

A store that ignores ``If-None-Match`` (some S3-compatible servers) would let two drivers both
"succeed": use one that implements it, as the docs say. Google Cloud Storage and Azure need no
lock of ours for Delta's commits (their log stores use the store's own preconditions), so there the
locks stay on the driver's disk (:mod:`.paths`).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from email.utils import parsedate_to_datetime
from functools import lru_cache
from types import TracebackType
from typing import Any
from urllib.parse import urlparse

from ...core.object_stores import store_kind
from ..errors import ModelRunError
from .locks import FileLock, LockBusy
from .store import Loc, ObjectPath, StoreOptions

log = logging.getLogger(__name__)

DEFAULT_TTL_S = 60.0
_CONFLICT = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}
_GONE = {"NoSuchKey", "404"}


def lock_at(loc: Loc, *, busy_message: str = "", wait: bool = False,
            model: str | None = None) -> FileLock | ObjectLock:
    """The writer lock at ``loc``: a lease object on S3, else a local lock file (what :mod:`.paths` and the
    warehouse place there decides which)."""
    if isinstance(loc, ObjectPath):
        if store_kind(loc.uri) != "s3":
            raise ValueError(f"no lock object on {loc.uri}: only S3 has one; locks elsewhere are local files")
        return ObjectLock(loc, busy_message=busy_message, wait=wait, model=model)
    return FileLock(loc, busy_message=busy_message, wait=wait, model=model)


class ObjectLock:
    """``with ObjectLock(path, busy_message=...)`` takes the lease at ``path`` (an ``s3a://`` object) or fails
    fast with ``LockBusy`` naming its holder; ``wait=True`` waits for it instead. The same interface as
    :class:`~.locks.FileLock`, so a caller takes whichever :func:`~.locks.writer_lock` gives."""

    def __init__(self, path: ObjectPath, *, busy_message: str = "", wait: bool = False, model: str | None = None,
                 ttl_s: float = DEFAULT_TTL_S) -> None:
        self.path = path
        self.busy_message = busy_message
        self.wait = wait
        self.model = model
        self.ttl_s = ttl_s
        parsed = urlparse(path.uri)
        self._bucket, self._key = parsed.netloc, parsed.path.lstrip("/")
        self._etag: str | None = None
        self._record = ""
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False  # set when another driver took the lease over while this one held it

    # -- taking and releasing ------------------------------------------------------------------------
    def __enter__(self) -> ObjectLock:
        client = self._client()
        self._record = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "token": uuid.uuid4().hex,
                                   "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, sort_keys=True)
        delay = 0.2
        while True:
            try:
                self._etag = client.put_object(Bucket=self._bucket, Key=self._key, Body=self._record.encode(),
                                               IfNoneMatch="*")["ETag"]
                break
            except Exception as exc:
                if _code(exc) not in _CONFLICT:
                    raise self._error("could not create", exc) from None
            holder = self._holder(client)
            if holder is None:  # released meanwhile
                continue
            etag, record, stale = holder
            if stale:
                self._take_over(client, etag, record)
                continue
            if not self.wait:
                raise LockBusy(f"{self.busy_message} (lock {self.path} held by {_describe(record)})", self.model)
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew, name=f"streamt-lease-{self.path.name}", daemon=True)
        self._renewer.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
            self._renewer = None
        if self._etag is not None and not self.lost:
            try:
                self._client().delete_object(Bucket=self._bucket, Key=self._key, IfMatch=self._etag)
            except Exception as err:  # taken over meanwhile, or the store unreachable: the ttl frees it
                log.warning("streamt: the lock %s was not released (%s); it frees itself after %.0f s",
                            self.path, _code(err) or err, self.ttl_s)
        self._etag = None
        if self.lost and exc_type is None:
            # S3 has no fencing for Delta's commits: what this run wrote after the takeover may have met the
            # other driver's writes, so the run must not report success
            raise ModelRunError(
                f"the writer lock {self.path} was taken over by another driver while this run held it (its lease "
                f"was not renewed within {self.ttl_s:.0f} s: a paused process or an unreachable store); what this "
                "run wrote may interleave with that driver's writes: check the table's history "
                "(`streamt status --history MODEL`) and run again", self.model)

    # -- helpers ------------------------------------------------------------------------------------
    def _client(self) -> Any:
        return s3_client(self.path.options, self._bucket)

    def _holder(self, client: Any) -> tuple[str, dict[str, Any], bool] | None:
        """(ETag, record, stale) of the lease there, or None when there is none any more."""
        try:
            got = client.get_object(Bucket=self._bucket, Key=self._key)
        except Exception as exc:
            if _code(exc) in _GONE:
                return None
            raise self._error("could not read", exc) from None
        try:
            record = json.loads(got["Body"].read().decode("utf-8"))
        except ValueError:
            record = {}
        now = got.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
        age = (parsedate_to_datetime(now) - got["LastModified"]).total_seconds() if now else 0.0
        return got["ETag"], record, age > self.ttl_s or _dead_here(record)

    def _take_over(self, client: Any, etag: str, record: dict[str, Any]) -> None:
        try:
            client.delete_object(Bucket=self._bucket, Key=self._key, IfMatch=etag)
        except Exception as exc:
            if _code(exc) not in _CONFLICT | _GONE:  # another driver took it over first: try again
                raise self._error("could not take over a stale", exc) from None
            return
        log.warning("streamt: took over the lock %s from %s: not renewed for %.0f s, or its process is gone",
                    self.path, _describe(record), self.ttl_s)

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            try:
                self._etag = self._client().put_object(Bucket=self._bucket, Key=self._key,
                                                       Body=self._record.encode(), IfMatch=self._etag)["ETag"]
            except Exception as exc:
                if _code(exc) in _CONFLICT | _GONE:
                    self.lost = True
                    log.error("streamt: the lock %s was taken over by another driver while this run held it; "
                              "its lease was not renewed in time (a paused process, an unreachable store)",
                              self.path)
                    return
                log.warning("streamt: renewing the lock %s failed (%s); trying again", self.path, exc)

    def _error(self, what: str, exc: Exception) -> ModelRunError:
        return ModelRunError(
            f"{what} the writer lock {self.path}: {_code(exc) or type(exc).__name__}: {exc}. A project whose tables "
            "or checkpoints are on S3 keeps its writer locks there: the credentials need s3:GetObject, "
            "s3:PutObject and s3:DeleteObject on it, and the store must support conditional writes "
            "(If-None-Match)", self.model)


def _code(exc: BaseException) -> str:
    """The S3 error code of a botocore ``ClientError`` ('' for anything else)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    error = response.get("Error", {})
    return str(error.get("Code") or response.get("ResponseMetadata", {}).get("HTTPStatusCode") or "")


def _describe(record: dict[str, Any]) -> str:
    """``pid 12 on host-a since 2026-11-29T02:00:00+0000`` (what the lease says of its holder)."""
    if not record:
        return "an unreadable lease"
    return f"pid {record.get('pid')} on {record.get('host')} since {record.get('since')}"


def _dead_here(record: dict[str, Any]) -> bool:
    """Whether the holder was a process of this machine that no longer runs (``kill -9``, a crash)."""
    if record.get("host") != socket.gethostname() or not isinstance(record.get("pid"), int):
        return False
    try:
        os.kill(record["pid"], 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


@lru_cache(maxsize=8)
def s3_client(options: StoreOptions, bucket: str) -> Any:
    """A boto3 S3 client for ``bucket`` with the project's ``fs.s3a.*`` settings (endpoint, keys, region, path
    style), else the environment's and the instance role's credentials, as the AWS SDKs find them."""
    import boto3
    from botocore.config import Config

    s3 = options.s3(bucket)
    endpoint, _ = options.endpoint(s3)
    kwargs: dict[str, Any] = {}
    if s3.get("access.key") and s3.get("secret.key"):
        kwargs.update(aws_access_key_id=s3["access.key"], aws_secret_access_key=s3["secret.key"],
                      aws_session_token=s3.get("session.token") or None)
    region = s3.get("endpoint.region") or ("us-east-1" if endpoint else None)
    path_style = s3.get("path.style.access", "").lower() in ("true", "1", "yes")
    config = Config(s3={"addressing_style": "path" if path_style else "auto"},
                    retries={"max_attempts": 5, "mode": "standard"})
    return boto3.session.Session().client("s3", endpoint_url=endpoint, region_name=region, config=config, **kwargs)
