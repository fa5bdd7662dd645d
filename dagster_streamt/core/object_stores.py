"""Which locations are on an object store: the URI schemes Spark's Hadoop connectors reach (``s3a://``,
``gs://``, ``abfss://``), with the name delta-rs and pyarrow give each. Plain data, so ``streamt
validate`` can tell them apart without the Spark package (:mod:`dagster_streamt.spark.storage.store` reaches them)."""

from __future__ import annotations

# Where a Parquet/JSON/CSV export on an object store names its current files (Hive's symlink manifest, as
# Delta's GENERATE symlink_format_manifest writes it): the readers' contract, see spark.sinks.object_export
EXPORT_MANIFEST = "_symlink_format_manifest/manifest"

# URI scheme Spark uses -> scheme delta-rs and pyarrow use
SCHEMES = {"s3a": "s3", "s3": "s3", "s3n": "s3", "gs": "gs", "abfss": "abfss", "abfs": "abfs"}


def store_kind(value: str) -> str | None:
    """The store a location is on as delta-rs names it (``s3``, ``gs``, ``abfss``...); None when local."""
    scheme = value.split("://", 1)[0].lower() if "://" in value else ""
    return SCHEMES.get(scheme)


def is_object_uri(value: str) -> bool:
    """Whether ``value`` names a location on an object store Spark's Hadoop connectors reach."""
    return store_kind(value) is not None


def delta_rs_uri(value: str) -> str:
    """``value`` with the scheme delta-rs uses (``s3a://b/k`` -> ``s3://b/k``); a local path as it is."""
    kind = store_kind(value)
    return f"{kind}://{value.split('://', 1)[1]}" if kind is not None else value
