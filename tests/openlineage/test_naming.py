"""Dataset naming follows the OpenLineage naming spec the way the Spark listener applies it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.openlineage.naming import (
    DatasetId,
    ProjectNaming,
    Symlink,
    jdbc_dataset,
    kafka_namespace,
    location_dataset,
    parse_jdbc_url,
)

from .conftest import MakeProject


def test_local_paths_are_absolute_in_the_file_namespace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert location_dataset("data/orders") == DatasetId("file", f"{tmp_path.resolve().as_posix()}/data/orders",
                                                        kind="FILE")
    assert location_dataset("/data/orders/*.json").name == "/data/orders"  # a glob names its folder
    assert location_dataset("file:///data/orders").key == ("file", "/data/orders")


@pytest.mark.parametrize(("uri", "key"), [
    ("s3a://bucket/warehouse/orders", ("s3://bucket", "warehouse/orders")),
    ("gs://bucket/a/b", ("gs://bucket", "a/b")),
    ("hdfs://nn:9000/data/x", ("hdfs://nn:9000", "/data/x")),
    ("hdfs://nn/data/x", ("hdfs://nn:8020", "/data/x")),
    ("abfss://c@acct.dfs.core.windows.net/p/q", ("abfss://c@acct.dfs.core.windows.net", "p/q")),
])
def test_object_stores_and_hdfs(uri: str, key: tuple[str, str]) -> None:
    assert location_dataset(uri).key == key


@pytest.mark.parametrize(("url", "table", "key"), [
    ("jdbc:postgresql://db.example:5433/shop?user=u&password=secret", "orders",
     ("postgres://db.example:5433", "shop.public.orders")),
    ("jdbc:postgresql://db.example/shop", "sales.orders", ("postgres://db.example:5432", "shop.sales.orders")),
    ("jdbc:postgresql://u:pw@db.example:5432/shop", "orders", ("postgres://db.example:5432", "shop.public.orders")),
    ("jdbc:mysql://my:3307/shop", "orders", ("mysql://my:3307", "shop.orders")),
    ("jdbc:mysql://my/shop", "other.orders", ("mysql://my:3306", "other.orders")),
    ("jdbc:sqlserver://ms:1433;databaseName=shop;password=x", "orders", ("sqlserver://ms:1433", "shop.dbo.orders")),
    ("jdbc:oracle:thin:@//ora:1521/ORCL", "app.orders", ("oracle://ora:1521", "ORCL.app.orders")),
])
def test_jdbc_names(url: str, table: str, key: tuple[str, str]) -> None:
    ds = jdbc_dataset(url, table)
    assert ds.key == key
    assert "secret" not in ds.namespace + ds.name and "pw" not in ds.namespace


def test_jdbc_query_is_named_stably() -> None:
    a = jdbc_dataset("jdbc:postgresql://h:5432/db", None, "select 1")
    assert a.name.startswith("db.query_") and a == jdbc_dataset("jdbc:postgresql://h:5432/db", None, "select 1")
    assert a != jdbc_dataset("jdbc:postgresql://h:5432/db", None, "select 2")
    assert jdbc_dataset("jdbc:postgresql://h/db", "(select 1) t").name.startswith("db.query_")
    assert parse_jdbc_url("jdbc:postgresql://h/db").namespace == "postgres://h:5432"


def test_kafka_namespace_uses_the_first_bootstrap_server() -> None:
    assert kafka_namespace("b1:9093,b2:9093") == "kafka://b1:9093"
    assert kafka_namespace("SASL_SSL://b1:9094") == "kafka://b1:9094"
    assert kafka_namespace("broker") == "kafka://broker:9092"


def test_project_sources_models_and_sinks(make_project: MakeProject) -> None:
    loaded = make_project({
        "runtime": {"openlineage": {"namespace": "shop_ns"}, "kafka": {"bootstrap_servers": "k1:9092,k2:9092"},
                    "spark": {"warehouse": "wh"}},
        "sources": [
            {"name": "files", "format": "json", "path": "data/in", "columns": [{"name": "a", "type": "int"}]},
            {"name": "pg", "format": "jdbc", "options": {"url": "jdbc:postgresql://pg:5432/app", "dbtable": "orders"}},
            {"name": "events", "topic": "orders.v1"},
            {"name": "own_broker", "format": "kafka", "topic": "t2", "options": {"kafka.bootstrap.servers": "x:1"}},
            {"name": "multi", "format": "kafka", "options": {"subscribe": "a,b"}},
            {"name": "catalog", "table": "sales.customers"},
            {"name": "bare_table", "format": "table", "table": "customers"},
            {"name": "ticks", "format": "rate"},
        ],
        "models": [
            {"name": "t1", "materialized": "table", "sql": "SELECT a FROM {{ source('files') }}"},
            {"name": "s1", "materialized": "stream", "sql": "SELECT a FROM {{ source('files') }}"},
            {"name": "v1", "materialized": "view", "sql": "SELECT a FROM {{ ref('t1') }}"},
            {"name": "out_files", "materialized": "sink", "from": "t1", "sink": {"format": "parquet", "path": "out"}},
            {"name": "out_pg", "materialized": "sink", "from": "t1",
             "sink": {"format": "jdbc", "options": {"url": "jdbc:postgresql://pg:5432/dw", "dbtable": "mart.t1"}}},
            {"name": "out_kafka", "materialized": "sink", "from": "t1", "sink": {"format": "kafka"}},
        ],
    })
    root = loaded.project.root.resolve().as_posix()
    n = ProjectNaming(loaded.project)
    assert n.namespace == "shop_ns"
    assert n.source("files") == (DatasetId("file", f"{root}/data/in", (Symlink("shop_ns", "t.files"),), "FILE"),)
    assert n.source("pg")[0].key == ("postgres://pg:5432", "app.public.orders")
    assert n.source("events")[0].key == ("kafka://k1:9092", "orders.v1")
    assert n.source("own_broker")[0].key == ("kafka://x:1", "t2")
    assert [d.name for d in n.source("multi")] == ["a", "b"]
    assert n.source("catalog")[0].key == ("spark_catalog", "sales.customers")
    assert n.source("bare_table")[0].key == ("spark_catalog", "default.customers")
    assert n.source("ticks")[0].key == ("shop_ns", "t.ticks")
    # models stored in the warehouse: the model's folder, with the table name as a symlink
    assert n.model("t1") == DatasetId("file", f"{root}/wh/t1", (Symlink("shop_ns", "t.t1", "TABLE"),), "TABLE")
    assert n.model("s1").key == ("file", f"{root}/wh/s1") and n.model("s1").kind == "STREAM"
    assert n.model("v1").key == ("shop_ns", "t.v1") and n.model("v1").kind == "VIEW"
    assert n.model("out_files").key == ("file", f"{root}/out")
    assert n.model("out_pg").key == ("postgres://pg:5432", "dw.mart.t1")
    assert n.model("out_kafka").key == ("kafka://k1:9092", "out_kafka")
    assert n.relation("unknown_thing")[0].key == ("shop_ns", "t.unknown_thing")


def test_hive_metastore_catalog(make_project: MakeProject) -> None:
    loaded = make_project({
        "runtime": {"spark": {"conf": {"spark.sql.catalogImplementation": "hive",
                                       "spark.hadoop.hive.metastore.uris": "thrift://meta:9083"}}},
        "sources": [{"name": "c", "table": "crm.customers"}, {"name": "i", "table": "lake.db.events"}],
    })
    n = ProjectNaming(loaded.project)
    assert n.source("c")[0].key == ("hive://meta:9083", "crm.customers")
    assert n.source("i")[0].key == ("lake", "db.events")


def test_namespace_defaults_to_env_then_project_name(make_project: MakeProject,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = make_project({})
    monkeypatch.delenv("OPENLINEAGE_NAMESPACE", raising=False)
    assert ProjectNaming(loaded.project).namespace == "t"
    monkeypatch.setenv("OPENLINEAGE_NAMESPACE", "prod")
    assert ProjectNaming(loaded.project).namespace == "prod"
    assert ProjectNaming(loaded.project, "explicit").namespace == "explicit"
