"""The warehouse's locations (:mod:`dagster_streamt.spark.storage.store`): what an ``s3a://`` setting becomes for
delta-rs and pyarrow, and that a local setting stays a path relative to the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.core.object_stores import is_object_uri
from dagster_streamt.spark.storage.store import ObjectPath, StoreOptions, delta_rs_args, location

CONF = {"spark.hadoop.fs.s3a.endpoint": "minio.internal:9000", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": "AK", "spark.hadoop.fs.s3a.secret.key": "SK",
        "spark.hadoop.fs.s3a.path.style.access": "true", "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1",
        "spark.hadoop.fs.s3a.bucket.other.endpoint": "https://s3.eu-central-1.amazonaws.com",
        "spark.hadoop.fs.s3a.bucket.other.access.key": "AK2", "spark.sql.shuffle.partitions": "4"}


def test_delta_rs_gets_the_same_store_spark_is_configured_for() -> None:
    options = StoreOptions.from_spark_conf(CONF)
    assert all(k.startswith("fs.") for k, _ in options.hadoop)  # Spark's own settings stay out
    uri, given = delta_rs_args(ObjectPath("s3a://lake/wh/orders/data", options))
    assert uri == "s3://lake/wh/orders/data"
    assert given == {"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_REGION": "eu-west-1",
                     "AWS_ENDPOINT_URL": "http://minio.internal:9000", "AWS_ALLOW_HTTP": "true",
                     "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false"}
    # Hadoop's per-bucket settings win for their bucket
    other = options.delta_rs("s3a://other/x")
    assert (other["AWS_ENDPOINT_URL"], other["AWS_ACCESS_KEY_ID"]) == ("https://s3.eu-central-1.amazonaws.com", "AK2")
    assert "AWS_ALLOW_HTTP" not in other
    # nothing configured: delta-rs' own defaults (the environment, instance credentials)
    assert delta_rs_args(ObjectPath("s3a://lake/t", StoreOptions()))[1] is None
    assert StoreOptions.from_spark_conf(CONF).delta_rs("gs://bucket/t") == {}


def test_object_paths_join_like_paths_and_print_as_spark_uris() -> None:
    root = ObjectPath("s3a://lake/wh/", StoreOptions.from_spark_conf(CONF))
    table = root / "orders" / "data"
    assert str(table) == "s3a://lake/wh/orders/data" and table.name == "data"
    assert table.parent == root / "orders" and table.options == root.options
    assert str(ObjectPath("s3a://lake").parent) == "s3a://lake"  # the bucket is the top
    with pytest.raises(ValueError, match="not an object store URI"):
        ObjectPath("/tmp/wh")


def test_a_location_is_an_object_store_uri_or_a_path_relative_to_the_project(tmp_path: Path) -> None:
    assert [is_object_uri(v) for v in ("s3a://b/k", "S3://b", "gs://b/k", "abfss://c@a.dfs.core.windows.net/p",
                                       "hdfs://nn/p", "file:///tmp", "/tmp/s3a", "s3a:/b")] == \
        [True, True, True, True, False, False, False, False]
    assert location("s3a://lake/wh", lambda v: tmp_path / v, CONF) == ObjectPath("s3a://lake/wh")
    assert location(".streamt/warehouse", lambda v: tmp_path / v, CONF) == (tmp_path / ".streamt/warehouse").resolve()
    with pytest.raises(ValueError, match="local or mounted folder, or on an object store"):
        location("hdfs://nn:8020/wh", lambda v: tmp_path / v, CONF)


def test_sessions_get_the_s3a_jars_only_when_the_project_names_s3a(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_streamt.api import load
    from dagster_streamt.jars.sets import JarsUnavailable
    from dagster_streamt.spark.session.session_jars import needed_sets, session_jars, uses_s3a

    from ..helpers import write_project

    local = load(write_project(tmp_path / "a", {}), use_cache=False).project
    remote = load(write_project(tmp_path / "b", {"stream_project.yml": (
        "project: {name: b}\nruntime: {spark: {warehouse: 's3a://lake/b'}}\n")}), use_cache=False).project
    assert (uses_s3a(local), uses_s3a(remote)) == (False, True)
    assert [s.key for s in needed_sets(local)] == ["delta"] and [s.key for s in needed_sets(remote)] == ["delta", "s3"]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv("STREAMT_JARS", "cache")
    own = {"spark.jars.packages": "org.apache.hadoop:hadoop-aws:3.5.0,io.delta:delta-spark_4.2_2.13:4.4.0"}
    assert session_jars(remote, own)["spark.jars.packages"] == own["spark.jars.packages"]  # the project's own: kept
    with pytest.raises(JarsUnavailable, match=r"hadoop-aws .*`streamt jars fetch s3`"):
        session_jars(remote, {"spark.jars.packages": "io.delta:delta-spark_4.2_2.13:4.4.0"})


def test_the_read_line_of_a_table_in_a_bucket_names_delta_rs_scheme_and_no_secret() -> None:
    from dagster_streamt.core.results import ModelResult

    line = ModelResult(model="m", materialized="table", status="success", location="s3a://lake/wh/m/data",
                       delta_version=3).read_line
    assert line is not None and line.startswith('deltalake.DeltaTable("s3://lake/wh/m/data", storage_options={...})')
