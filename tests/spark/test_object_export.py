"""A file export on an object store (moto's S3 server, no JVM): each publish replaces one manifest that
lists the current version's files, read back as a reader would (pyarrow, from the manifest's URIs).

Spark writes the data in a real run (tests/spark/test_object_store.py); here ``build`` writes Parquet
files with pyarrow, so every step of the publish protocol and its failures run in the fast tier."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dagster_streamt.core.object_stores import EXPORT_MANIFEST
from dagster_streamt.spark.sinks.object_export import ObjectExport, ObjectVersion, export_store
from dagster_streamt.spark.storage.store import ObjectPath, StoreOptions

from ..helpers import S3_BUCKET, s3_conf

QUERY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def export(s3_endpoint: str, request: pytest.FixtureRequest) -> Iterator[ObjectExport]:
    store = StoreOptions.from_spark_conf(s3_conf(s3_endpoint))
    path = ObjectPath(f"s3a://{S3_BUCKET}/exports/{request.node.name}", store)
    yield ObjectExport(path, "orders")
    path.rmtree()


def _fs_of(loc: ObjectPath) -> Any:
    return loc.options.filesystem(loc.uri)


def _key(uri: str) -> str:
    return uri.split("://", 1)[1]


def writes(*ids: int, files: int = 1) -> Any:
    """A ``build`` that writes ``ids`` as Parquet into the new prefix (in ``files`` files)."""
    def build(prefix: ObjectPath, current: ObjectVersion | None) -> None:
        fs = _fs_of(prefix)
        for n in range(files):
            part = [i for k, i in enumerate(ids) if k % files == n]
            pq.write_table(pa.table({"id": pa.array(part, pa.int64())}), f"{_key(str(prefix))}/part-{n:05d}.parquet",
                           filesystem=fs)
        fs.open_output_stream(f"{_key(str(prefix))}/_SUCCESS").close()  # as Spark's committer leaves
    return build


def read(export: ObjectExport) -> list[int]:
    """What a reader sees: the manifest's lines, each file read by its URI."""
    fs = _fs_of(export.path)
    with fs.open_input_stream(_key(str(export.path / EXPORT_MANIFEST))) as stream:
        uris = stream.read().decode().split()
    return sorted(i for uri in uris for i in pq.read_table(_key(uri), filesystem=fs).column("id").to_pylist())


def prefixes(export: ObjectExport) -> list[str]:
    return sorted(p.name for p in export.versions.iterdir())


def test_a_snapshot_replaces_the_list_and_keeps_the_previous_version_for_readers(export: ObjectExport) -> None:
    assert export.current() is None
    first = export.publish(writes(1, 2, 3, files=2))
    assert read(export) == [1, 2, 3]
    current = export.current()
    assert current is not None and len(current.files) == 2 and (current.query, current.batch) == (None, None)
    assert all(f.startswith(f"{first}/part-") for f in current.files)  # data files only, not _SUCCESS

    second = export.publish(writes(4))
    assert read(export) == [4]
    assert prefixes(export) == sorted([first.name, second.name])  # a reader of the first one can finish
    third = export.publish(writes(5, 6))
    assert read(export) == [5, 6]
    assert prefixes(export) == sorted([second.name, third.name])  # the first one is gone


def test_an_append_lists_earlier_files_again_without_copying_them(export: ObjectExport) -> None:
    first = export.publish(writes(1, 2), QUERY, 0, append=True)
    export.publish(writes(3), QUERY, 1, append=True)
    export.publish(writes(), QUERY, 2, append=True)  # an empty batch: an empty file, as Spark writes
    assert read(export) == [1, 2, 3]
    current = export.current()
    assert current is not None and (current.query, current.batch) == (QUERY[:8], 2)
    assert current.files[0].startswith(f"{first}/")  # the first batch's file, where it was written

    refreshed = "fedcba9876543210" * 2  # a full refresh: a new checkpoint, a new query id
    export.publish(writes(7), refreshed, 0, append=True)
    assert read(export) == [7]
    current = export.current()
    assert current is not None and (current.query, current.batch) == (refreshed[:8], 0)


def test_a_failed_build_publishes_nothing_and_a_crash_leaves_only_garbage_for_the_next_publish(
        export: ObjectExport) -> None:
    export.publish(writes(1))

    def fails(prefix: ObjectPath, current: ObjectVersion | None) -> None:
        writes(9)(prefix, current)
        raise RuntimeError("the key check failed")

    with pytest.raises(RuntimeError, match="key check"):
        export.publish(fails)
    assert read(export) == [1] and len(prefixes(export)) == 1  # its files are removed at once

    orphan = export.versions / "v=20260101T000000-deadbeef"  # a process killed before its manifest write
    writes(8)(orphan, None)
    assert read(export) == [1]
    export.publish(writes(2))
    assert read(export) == [2] and orphan.name not in prefixes(export)


def test_a_reader_of_the_folder_itself_finds_no_rows_rather_than_every_version(export: ObjectExport) -> None:
    import pyarrow.dataset as ds

    export.publish(writes(1, 2))
    export.publish(writes(3))
    folder = ds.dataset(_key(str(export.path)), filesystem=_fs_of(export.path), format="parquet")
    assert folder.files == []  # _versions and _symlink_format_manifest are hidden, as from Spark and Hive


def test_the_store_of_an_export_takes_the_sinks_own_credentials() -> None:
    store = export_store({"spark.hadoop.fs.s3a.access.key": "project", "spark.master": "local"},
                         {"fs.s3a.access.key": "sink", "compression": "snappy"})
    assert store.hadoop == (("fs.s3a.access.key", "sink"),)
