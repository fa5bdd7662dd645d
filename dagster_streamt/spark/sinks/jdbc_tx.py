"""One database transaction for a JDBC sink, on a Python connection (SQLAlchemy Core).

Spark's JDBC writer commits each task on its own and cannot run the statements that make a write
atomic (delete + insert, merge, record a batch id). Sinks therefore let Spark load rows into a staging
table, then run the statements that publish them in one transaction here. This process opens that
connection itself, from the sink's JDBC URL and options, rather than asking the Spark driver's JVM: a
Spark Connect client has no JVM, and a cluster's driver may not be where the run is. So the same code
runs from an embedded session, a Spark Connect client (or its server, for a stream's micro-batches)
and a cluster. Spark needs the database's JDBC jar (to load staging), this process its Python driver.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection as SAConnection
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from ...core.jdbc_url import split_jdbc_url
from ..errors import ModelRunError, first_meaningful_line

# Spark's own JDBC options; everything else is passed to the driver as a connection property.
SPARK_OPTIONS = frozenset({
    "url", "dbtable", "query", "driver", "partitioncolumn", "lowerbound", "upperbound", "numpartitions",
    "querytimeout", "fetchsize", "truncate", "cascadetruncate", "createtableoptions", "createtablecolumntypes",
    "customschema", "batchsize", "isolationlevel", "sessioninitstatement", "pushdownpredicate",
    "pushdownaggregate", "pushdownlimit", "pushdownoffset", "pushdowntablesample", "keytab", "principal",
    "refreshkrb5config", "connectionprovider", "preparequery", "preferTimestampNTZ".lower(),
})
_TABLE = re.compile(r'^(?:(?P<schema>"[^"]+"|`[^`]+`|[^."`]+)\.)?(?P<name>"[^"]+"|`[^`]+`|[^."`]+)$')


@dataclass(frozen=True)
class Driver:
    """The Python side of a JDBC subprotocol: SQLAlchemy's dialect+driver, its module, what pip installs."""

    dialect: str
    module: str
    package: str


DRIVERS = {
    "postgresql": Driver("postgresql+psycopg", "psycopg", "'psycopg[binary]'"),
    "mysql": Driver("mysql+pymysql", "pymysql", "pymysql"),
    "mariadb": Driver("mysql+pymysql", "pymysql", "pymysql"),
    "sqlserver": Driver("mssql+pymssql", "pymssql", "pymssql"),
    "oracle": Driver("oracle+oracledb", "oracledb", "oracledb"),
}
# PostgreSQL JDBC (pgjdbc) properties that libpq knows under another name; others stay Spark's
_PG_PROPERTIES = {"sslmode": "sslmode", "sslrootcert": "sslrootcert", "sslcert": "sslcert", "sslkey": "sslkey",
                  "applicationname": "application_name", "connecttimeout": "connect_timeout",
                  "logintimeout": "connect_timeout", "options": "options"}


@dataclass(frozen=True)
class Table:
    """``dbtable`` split so that companion tables (staging, commits) live in the same schema."""

    schema: str | None
    name: str  # as written, maybe quoted

    @classmethod
    def parse(cls, dbtable: str, model: str) -> Table:
        m = _TABLE.match(dbtable.strip())
        if not m:
            raise ModelRunError(f"sink {model}: cannot use `dbtable: {dbtable}` as a table name; write it as "
                                "table or schema.table (a query cannot be a sink target)", model)
        return cls(m.group("schema"), m.group("name"))

    def sibling(self, suffix: str) -> Table:
        """A table next to this one, ``<name><suffix>`` (quoting kept; short enough for PostgreSQL's 63)."""
        q = self.name[0] if self.name[0] in "\"`" else ""
        bare = self.name.strip("\"`")[: 63 - len(suffix)]
        return Table(self.schema, f"{q}{bare}{suffix}{q}")

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


def db_message(exc: BaseException) -> str:
    """The database's own words for an error: the driver's exception inside SQLAlchemy's wrapper, without
    the statement and link SQLAlchemy adds (the fixes in jdbc_sink.explain match on these texts)."""
    orig = getattr(exc, "orig", None)
    return first_meaningful_line(orig if isinstance(orig, BaseException) else exc)


def connection_url(options: Mapping[str, str], model: str) -> tuple[URL, dict[str, Any]]:
    """The SQLAlchemy URL and driver arguments for a sink's JDBC ``url`` and options (``user``,
    ``password`` and other connection properties, in the options or the URL, the URL's winning as in
    JDBC). Raises a :class:`ModelRunError` naming the ``pip install`` when the Python driver is missing."""
    jdbc = split_jdbc_url(options["url"])
    driver = DRIVERS.get(jdbc.subprotocol)
    if driver is None:
        raise ModelRunError(
            f"sink {model}: its publish transaction runs on a Python connection, which streamt opens for "
            f"PostgreSQL, MySQL/MariaDB, SQL Server and Oracle, not `jdbc:{jdbc.subprotocol}:`; use `mode: append` "
            "on a snapshot input (Spark's own writer, task by task)", model)
    if importlib.util.find_spec(driver.module) is None:
        raise ModelRunError(
            f"sink {model}: publishing to `jdbc:{jdbc.subprotocol}:` needs the Python driver `{driver.module}`, "
            f"which is not installed here; pip install {driver.package}", model)
    props = {k: v for k, v in options.items() if k.lower() not in SPARK_OPTIONS} | jdbc.params
    lower = {k.lower(): v for k, v in props.items()}
    database: str | None = jdbc.database or None
    query: dict[str, str] = {}
    if jdbc.subprotocol == "oracle" and jdbc.database and not jdbc.sid:  # a service name, not a SID
        database, query = None, {"service_name": jdbc.database}
    url = URL.create(driver.dialect, username=lower.get("user"), password=lower.get("password"),
                     host=jdbc.host, port=jdbc.port, database=database, query=query)
    return url, _postgres_args(lower) if jdbc.subprotocol == "postgresql" else {}


def _postgres_args(props: Mapping[str, str]) -> dict[str, Any]:
    """pgjdbc's properties as libpq's: ``ssl=true`` is pgjdbc's verify-full, ``currentSchema`` the
    search path."""
    args: dict[str, Any] = {_PG_PROPERTIES[k]: v for k, v in props.items() if k in _PG_PROPERTIES}
    if props.get("ssl", "").lower() == "true":
        args.setdefault("sslmode", "verify-full")
    if props.get("currentschema"):
        args["options"] = f"{args.get('options', '')} -c search_path={props['currentschema']}".strip()
    return args


@lru_cache(maxsize=16)
def _engine(url: URL, args: tuple[tuple[str, Any], ...]) -> Engine:
    return create_engine(url, poolclass=NullPool, connect_args=dict(args))  # no pool: a run's few transactions


class Connection:
    """One open transaction; statements are SQL text with ``:name`` parameters."""

    def __init__(self, conn: SAConnection) -> None:
        self._conn = conn

    def quote(self, identifier: str) -> str:
        """Always quoted, as Spark's JDBC writer names the staging table's columns (case kept)."""
        return self._conn.dialect.identifier_preparer.quote_identifier(identifier)

    def execute(self, sql: str, **params: object) -> int:
        return int(self._conn.execute(text(sql), params).rowcount)

    def rows(self, sql: str, **params: object) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self._conn.execute(text(sql), params)]

    def exists(self, table: Table) -> bool:
        """Whether ``table`` exists (asked in a savepoint: a failed query would abort a PostgreSQL
        transaction)."""
        try:
            with self._conn.begin_nested():
                self._conn.execute(text(f"SELECT 1 FROM {table.qualified} WHERE 1=0"))
        except Exception:
            return False
        return True

    def commit(self) -> None:
        """The one place a transaction commits (the crash tests pause the process here)."""
        self._conn.commit()


@contextmanager
def transaction(options: Mapping[str, str], model: str) -> Iterator[Connection]:
    """Commit when the block ends normally, roll back on any error (and, with the connection, when
    the process dies: the database discards an open transaction whose client is gone)."""
    url, args = connection_url(options, model)
    try:
        sa_conn = _engine(url, tuple(sorted(args.items()))).connect()
    except Exception as exc:
        raise ModelRunError(f"sink {model}: cannot connect to the database: {db_message(exc)}", model) from None
    with sa_conn:
        conn = Connection(sa_conn)
        try:
            yield conn
        except BaseException:
            sa_conn.rollback()
            raise
        conn.commit()


def is_postgres(options: Mapping[str, str]) -> bool:
    return options["url"].startswith("jdbc:postgresql:")


def has_python_driver(options: Mapping[str, str]) -> bool:
    """Whether streamt opens this database from Python (others take only Spark's own append writer)."""
    return split_jdbc_url(options["url"]).subprotocol in DRIVERS
