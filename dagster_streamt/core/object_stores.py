"""Which locations are on an object store: the URI schemes Spark's Hadoop connectors reach (``s3a://``,
``gs://``, ``abfss://``), with the name delta-rs and pyarrow give each. Plain data, so ``streamt
validate`` can tell them apart without the Spark package (:mod:`dagster_streamt.spark.store` reaches them)."""

from __future__ import annotations

# URI scheme Spark uses -> scheme delta-rs and pyarrow use
SCHEMES = {"s3a": "s3", "s3": "s3", "s3n": "s3", "gs": "gs", "abfss": "abfss", "abfs": "abfs"}


def is_object_uri(value: str) -> bool:
    """Whether ``value`` names a location on an object store Spark's Hadoop connectors reach."""
    scheme = value.split("://", 1)[0].lower() if "://" in value else ""
    return scheme in SCHEMES
