"""Where the warehouse lives: a local folder (a :class:`~pathlib.Path`) or an object store
(``s3a://``, ``gs://``, ``abfss://``: an :class:`ObjectPath`).

Spark reaches an object store through Hadoop's connectors with the ``spark.hadoop.fs.*`` settings of
``runtime.spark.conf``; the Python side (delta-rs reading a table's log, run state files,
removing a model's folder) reaches the same store with pyarrow's filesystems and delta-rs, configured
from those same settings (and else from the environment, as the AWS, Google and Azure SDKs are).
An :class:`ObjectPath` answers the few :class:`~pathlib.Path` calls the warehouse makes, so code that
handles a table's location works on either (``Loc``); what differs (atomic writes, removing a tree,
delta-rs' URI and options) is one function each here.

Object stores have no folders and no atomic rename: a data file is written by Spark's committer, a
table version by Delta's log store, a small file of ours by one PUT (atomic per object on S3, GCS, Azure).
"""

from __future__ import annotations

import contextlib
import fnmatch
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ...core.files import atomic_write
from ...core.object_stores import SCHEMES, delta_rs_uri, is_object_uri

_TRUE = ("true", "1", "yes")


@dataclass(frozen=True)
class StoreOptions:
    """The ``fs.*`` Hadoop settings of the project's Spark conf (``spark.hadoop.`` stripped): what the
    Python side needs to reach the store Spark writes to."""

    hadoop: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_spark_conf(cls, conf: Mapping[str, str]) -> StoreOptions:
        prefix = "spark.hadoop."
        return cls(tuple(sorted((k[len(prefix):], str(v)) for k, v in conf.items()
                                if k.startswith(prefix + "fs."))))

    def s3(self, bucket: str) -> dict[str, str]:
        """fs.s3a.* for ``bucket`` (Hadoop's per-bucket ``fs.s3a.bucket.<bucket>.*`` win)."""
        conf = dict(self.hadoop)
        out = {k[len("fs.s3a."):]: v for k, v in conf.items()
               if k.startswith("fs.s3a.") and not k.startswith("fs.s3a.bucket.")}
        own = f"fs.s3a.bucket.{bucket}."
        out.update({k[len(own):]: v for k, v in conf.items() if k.startswith(own)})
        return out

    def endpoint(self, s3: Mapping[str, str]) -> tuple[str | None, bool]:
        """The endpoint URL (with a scheme) and whether it is plain http."""
        endpoint = s3.get("endpoint")
        if not endpoint:
            return None, False
        if "://" not in endpoint:
            ssl = s3.get("connection.ssl.enabled", "true").lower() in _TRUE
            endpoint = f"{'https' if ssl else 'http'}://{endpoint}"
        return endpoint, endpoint.startswith("http://")

    def delta_rs(self, uri: str) -> dict[str, str]:
        """delta-rs ``storage_options`` for ``uri`` (empty: its own defaults and the environment)."""
        parsed = urlparse(uri)
        if SCHEMES.get(parsed.scheme) != "s3":
            return {}
        s3 = self.s3(parsed.netloc)
        names = (("access.key", "AWS_ACCESS_KEY_ID"), ("secret.key", "AWS_SECRET_ACCESS_KEY"),
                 ("session.token", "AWS_SESSION_TOKEN"), ("endpoint.region", "AWS_REGION"))
        out = {name: s3[key] for key, name in names if s3.get(key)}
        endpoint, http = self.endpoint(s3)
        if endpoint:
            out["AWS_ENDPOINT_URL"] = endpoint
        if http:
            out["AWS_ALLOW_HTTP"] = "true"
        if s3.get("path.style.access", "").lower() in _TRUE:
            out["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] = "false"
        return out

    def filesystem(self, uri: str) -> Any:
        """A pyarrow filesystem for ``uri``'s store (paths on it are ``bucket/key``), one per store and
        settings in a process (its client keeps connections)."""
        parsed = urlparse(uri)
        return _filesystem(self, parsed.scheme, parsed.netloc)

    def _make_filesystem(self, scheme: str, netloc: str) -> Any:
        from pyarrow import fs

        kind = SCHEMES[scheme]
        if kind == "s3":
            s3 = self.s3(netloc)
            endpoint, http = self.endpoint(s3)
            # a delayed open writes a small object with one PUT (no multipart upload: an S3-compatible
            # server may answer that one differently, as moto does, and pyarrow then fails the write)
            kwargs: dict[str, Any] = {"allow_delayed_open": True}
            if s3.get("access.key") and s3.get("secret.key"):
                kwargs.update(access_key=s3["access.key"], secret_key=s3["secret.key"],
                              session_token=s3.get("session.token") or None)
            if s3.get("endpoint.region"):
                kwargs["region"] = s3["endpoint.region"]
            if endpoint:
                kwargs.update(endpoint_override=endpoint.split("://", 1)[1], scheme="http" if http else "https")
            return fs.S3FileSystem(**kwargs)
        return fs.FileSystem.from_uri(f"{kind}://{netloc}")[0]  # Google / Azure: their defaults


@lru_cache(maxsize=16)
def _filesystem(options: StoreOptions, scheme: str, netloc: str) -> Any:
    return options._make_filesystem(scheme, netloc)


@dataclass(frozen=True)
class ObjectPath:
    """A key prefix on an object store, with the few :class:`~pathlib.Path` calls the warehouse makes.
    ``str()`` is the URI Spark reads and writes (``s3a://bucket/key``)."""

    uri: str
    options: StoreOptions = field(default_factory=StoreOptions, compare=False)

    def __post_init__(self) -> None:
        if not is_object_uri(self.uri):
            raise ValueError(f"not an object store URI: {self.uri}")
        object.__setattr__(self, "uri", self.uri.rstrip("/"))

    def __str__(self) -> str:
        return self.uri

    def __truediv__(self, part: str) -> ObjectPath:
        return ObjectPath(f"{self.uri}/{part.strip('/')}", self.options)

    @property
    def name(self) -> str:
        return self.uri.rsplit("/", 1)[-1]

    @property
    def parent(self) -> ObjectPath:
        head = self.uri.rsplit("/", 1)[0]
        return ObjectPath(head, self.options) if "://" in head and head.split("://", 1)[1] else self

    @property
    def _key(self) -> str:
        """The path pyarrow's filesystems take: ``bucket/key``."""
        return self.uri.split("://", 1)[1]

    def _fs(self) -> Any:
        return self.options.filesystem(self.uri)

    def exists(self) -> bool:
        from pyarrow import fs

        return bool(self._fs().get_file_info(self._key).type != fs.FileType.NotFound) or self.is_dir()

    def is_file(self) -> bool:
        from pyarrow import fs

        return bool(self._fs().get_file_info(self._key).type == fs.FileType.File)

    def is_dir(self) -> bool:
        """A "folder" exists while any object lies under it."""
        from pyarrow import fs

        try:
            found = self._fs().get_file_info(fs.FileSelector(self._key, recursive=False, allow_not_found=True))
        except (FileNotFoundError, NotADirectoryError, OSError):
            return False
        return bool(found)

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Nothing to do: object stores have no folders (a key's prefix exists with its first object)."""

    def iterdir(self) -> Iterator[ObjectPath]:
        from pyarrow import fs

        selector = fs.FileSelector(self._key, recursive=False, allow_not_found=True)
        for info in sorted(self._fs().get_file_info(selector), key=lambda i: i.path):
            yield self / info.base_name

    def glob(self, pattern: str) -> Iterator[ObjectPath]:
        """The entries right under this prefix whose name matches ``pattern`` (one level: ``run_id=*``)."""
        return (p for p in self.iterdir() if fnmatch.fnmatchcase(p.name, pattern))

    def files(self, skip: Any = None) -> dict[str, int]:
        """Every object under this prefix, by key relative to it, with its size; ``skip(name)``: leave
        out a file or folder by its name (and everything under such a folder)."""
        return {rel: size for rel, (size, _) in self.stat_files(skip).items()}

    def stat_files(self, skip: Any = None) -> dict[str, tuple[int, int]]:
        """:meth:`files` with each object's (size, modification time in ns); this object itself when it
        is one (its name as the key)."""
        from pyarrow import fs

        filesystem = self._fs()
        own = filesystem.get_file_info(self._key)
        if own.type == fs.FileType.File:
            return {self.name: (int(own.size or 0), int(own.mtime_ns or 0))}
        selector = fs.FileSelector(self._key, recursive=True, allow_not_found=True)
        found = {info.path[len(self._key) + 1:]: (int(info.size or 0), int(info.mtime_ns or 0))
                 for info in filesystem.get_file_info(selector) if info.type == fs.FileType.File}
        return {rel: stat for rel, stat in found.items() if skip is None or not any(map(skip, rel.split("/")))}

    def read_text(self, encoding: str = "utf-8") -> str:
        from pyarrow import fs

        filesystem = self._fs()
        if filesystem.get_file_info(self._key).type == fs.FileType.NotFound:
            raise FileNotFoundError(self.uri)
        with filesystem.open_input_stream(self._key) as stream:
            return bytes(stream.read()).decode(encoding)

    def write_text(self, text: str, encoding: str = "utf-8") -> None:
        """One PUT: readers see the old object or the new one."""
        with self._fs().open_output_stream(self._key) as stream:
            stream.write(text.encode(encoding))

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self._fs().delete_file(self._key)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rmtree(self) -> None:
        from pyarrow import fs

        filesystem = self._fs()
        if filesystem.get_file_info(self._key).type != fs.FileType.NotFound or self.is_dir():
            filesystem.delete_dir_contents(self._key, missing_dir_ok=True)
            with contextlib.suppress(OSError):  # a store without folders has none to remove
                filesystem.delete_dir(self._key)


Loc = Path | ObjectPath


def location(value: str | Path, resolve: Any, conf: Mapping[str, str]) -> Loc:
    """A configured location: an object store URI as an :class:`ObjectPath` (reached with ``conf``'s
    Hadoop settings), anything else as a local path made absolute by ``resolve`` (the project's)."""
    text = str(value)
    if is_object_uri(text):
        return ObjectPath(text, StoreOptions.from_spark_conf(conf))
    if "://" in text:  # streamt validate says so first (STR091)
        raise ValueError(f"{text}: a warehouse is a local or mounted folder, or on an object store "
                         f"({', '.join(sorted(f'{s}://' for s in SCHEMES))})")
    return Path(resolve(text)).resolve()


def remove_tree(loc: Loc) -> None:
    """Remove a folder (or key prefix) and everything in it; nothing if it is not there."""
    if isinstance(loc, ObjectPath):
        loc.rmtree()
    else:
        shutil.rmtree(loc, ignore_errors=True)


def write_text(loc: Loc, text: str, *, durable: bool = False) -> None:
    """Replace a small file at once: a rename on a local disk, one PUT on an object store."""
    if isinstance(loc, ObjectPath):
        loc.write_text(text)
    else:
        atomic_write(loc, text, durable=durable)


def delta_rs_args(loc: Loc) -> tuple[str, dict[str, str] | None]:
    """``(table_uri, storage_options)`` for ``deltalake.DeltaTable``."""
    if isinstance(loc, ObjectPath):
        return delta_rs_uri(loc.uri), loc.options.delta_rs(loc.uri) or None
    return str(loc), None


def open_delta(loc: Loc, version: int | None = None) -> Any:
    """delta-rs' ``DeltaTable`` at ``loc`` (at ``version``; default: the current one)."""
    from deltalake import DeltaTable

    uri, options = delta_rs_args(loc)
    return DeltaTable(uri, version=version, storage_options=options)
