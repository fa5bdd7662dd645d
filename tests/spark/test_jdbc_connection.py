"""A JDBC sink's URL and options as the Python connection of its publish transaction (no Spark, no
database): credentials and properties from either place, the driver per database, and the fix when
the Python driver is missing."""

from __future__ import annotations

import importlib.util

import pytest

from dagster_streamt.core.jdbc_url import split_jdbc_url
from dagster_streamt.spark.errors import ModelRunError
from dagster_streamt.spark.sinks.jdbc_tx import connection_url, has_python_driver


def test_postgres_url_options_and_properties() -> None:
    url, args = connection_url({
        "url": "jdbc:postgresql://db.example:5433/shop?user=etl&password=p%40ss&sslmode=require"
               "&currentSchema=mart&reWriteBatchedInserts=true",
        "dbtable": "orders", "driver": "org.postgresql.Driver", "batchsize": "1000"}, "to_pg")
    assert (url.drivername, url.host, url.port, url.database) == ("postgresql+psycopg", "db.example", 5433, "shop")
    assert (url.username, url.password) == ("etl", "p@ss")
    assert args == {"sslmode": "require", "options": "-c search_path=mart"}, "pgjdbc-only properties stay Spark's"


def test_credentials_from_the_options_url_wins() -> None:
    url, _ = connection_url({"url": "jdbc:postgresql://h/db", "user": "u", "password": "secret"}, "m")
    assert (url.username, url.password, url.port) == ("u", "secret", None)
    url, args = connection_url({"url": "jdbc:postgresql://h/db?user=a&ssl=true", "user": "u"}, "m")
    assert url.username == "a" and args == {"sslmode": "verify-full"}  # pgjdbc's ssl=true


@pytest.mark.parametrize(("jdbc", "module", "pip"), [
    ("jdbc:mysql://my:3307/shop?user=u", "pymysql", "pip install pymysql"),
    ("jdbc:mariadb://my/shop", "pymysql", "pip install pymysql"),
    ("jdbc:sqlserver://ms:1433;databaseName=shop;user=sa", "pymssql", "pip install pymssql"),
    ("jdbc:oracle:thin:scott/tiger@//ora:1521/ORCL", "oracledb", "pip install oracledb"),
])
def test_missing_python_driver_names_the_pip_install(jdbc: str, module: str, pip: str) -> None:
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    with pytest.raises(ModelRunError) as err:
        connection_url({"url": jdbc, "dbtable": "t"}, "to_db")
    assert str(err.value).startswith("sink to_db: ") and pip in str(err.value), err.value
    assert has_python_driver({"url": jdbc})


def test_other_databases_say_what_works() -> None:
    with pytest.raises(ModelRunError, match="mode: append"):
        connection_url({"url": "jdbc:db2://h:50000/x"}, "m")
    assert not has_python_driver({"url": "jdbc:h2:mem:x"})


@pytest.mark.parametrize(("jdbc", "parts"), [
    ("jdbc:mysql://u:pw@my:3307/shop?useSSL=false", ("mysql", "my", 3307, "shop", False)),
    ("jdbc:sqlserver://ms;databaseName=shop;password=x", ("sqlserver", "ms", None, "shop", False)),
    ("jdbc:oracle:thin:@ora:1521:XE", ("oracle", "ora", 1521, "XE", True)),
    ("jdbc:oracle:thin:@//ora/svc", ("oracle", "ora", None, "svc", False)),
    ("jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS=(HOST=x)))", ("oracle", None, None, "", False)),
    ("jdbc:postgresql://h1:5432,h2:5432/db", ("postgresql", "h1", None, "db", False)),
])
def test_split_jdbc_url(jdbc: str, parts: tuple[object, ...]) -> None:
    u = split_jdbc_url(jdbc)
    assert (u.subprotocol, u.host, u.port, u.database, u.sid) == parts


def test_oracle_service_and_sid() -> None:
    pytest.importorskip("oracledb")
    svc, _ = connection_url({"url": "jdbc:oracle:thin:scott/tiger@//ora:1521/ORCL"}, "m")
    assert (svc.username, svc.password, svc.database, dict(svc.query)) == ("scott", "tiger", None,
                                                                           {"service_name": "ORCL"})
    sid, _ = connection_url({"url": "jdbc:oracle:thin:@ora:1521:XE", "user": "a"}, "m")
    assert (sid.database, dict(sid.query)) == ("XE", {})
