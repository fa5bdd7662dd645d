"""One database transaction over JDBC, opened in the Spark driver's JVM (through py4j).

Spark's JDBC writer commits each task on its own and cannot run the statements that make a write
atomic (delete + insert, merge, record a batch id). Sinks therefore let Spark load rows into a staging
table, then run the statements that publish them in one transaction here, with the same driver jar,
URL and credentials Spark uses. A Spark Connect client has no JVM, so it cannot open one (see
:func:`require_jvm`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from .errors import ModelRunError, first_meaningful_line
from .session import is_connect

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


def require_jvm(spark: SparkSession, model: str, what: str) -> None:
    if is_connect(spark):
        raise ModelRunError(
            f"sink {model}: {what} needs a database transaction, which this process opens through the Spark "
            "driver's JVM, and a Spark Connect client has none; run this sink with an embedded or cluster "
            "session (runtime.spark.master), or use `mode: append` for a batch sink", model)


class Connection:
    """A ``java.sql.Connection`` in one transaction; statements are plain SQL strings."""

    def __init__(self, jconn: Any, dialect: Any) -> None:
        self._conn = jconn
        self._dialect = dialect

    def quote(self, identifier: str) -> str:
        return str(self._dialect.quoteIdentifier(identifier))

    def execute(self, sql: str, *params: object) -> int:
        stmt = self._conn.prepareStatement(sql)
        try:
            for i, p in enumerate(params, 1):
                if isinstance(p, int):
                    stmt.setLong(i, p)
                else:
                    stmt.setString(i, str(p))
            return int(stmt.executeUpdate())
        finally:
            stmt.close()

    def rows(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        stmt = self._conn.prepareStatement(sql)
        try:
            for i, p in enumerate(params, 1):
                stmt.setString(i, str(p))
            rs = stmt.executeQuery()
            n = rs.getMetaData().getColumnCount()
            out = []
            while rs.next():
                out.append(tuple(rs.getObject(i) for i in range(1, n + 1)))
            return out
        finally:
            stmt.close()

    def exists(self, table: Table) -> bool:
        """Whether ``table`` exists (asked in a savepoint: a failed query would abort a PostgreSQL
        transaction)."""
        savepoint = self._conn.setSavepoint()
        try:
            self.rows(f"SELECT 1 FROM {table.qualified} WHERE 1=0")
        except Exception:
            self._conn.rollback(savepoint)
            return False
        self._conn.releaseSavepoint(savepoint)
        return True


def _jvm(spark: SparkSession) -> Any:
    return spark._jvm  # the driver JVM of a classic session


@contextmanager
def transaction(spark: SparkSession, options: dict[str, str], model: str) -> Iterator[Connection]:
    """Commit when the block ends normally, roll back on any error (and, with the connection, when
    the process dies: the database discards an open transaction whose client is gone)."""
    require_jvm(spark, model, "this jdbc sink")
    jvm = _jvm(spark)
    url = options["url"]
    driver = options.get("driver")
    props = jvm.java.util.Properties()
    for k, v in options.items():
        if k.lower() not in SPARK_OPTIONS:
            props.setProperty(k, v)
    try:
        if driver:  # the same registry Spark's JDBC source uses, so a jar from spark.jars is found
            jvm.org.apache.spark.sql.execution.datasources.jdbc.DriverRegistry.register(driver)
        jconn = jvm.java.sql.DriverManager.getConnection(url, props)
    except Exception as exc:
        raise ModelRunError(f"sink {model}: cannot connect to the database: {first_meaningful_line(exc)}",
                            model) from None
    try:
        jconn.setAutoCommit(False)
        conn = Connection(jconn, jvm.org.apache.spark.sql.jdbc.JdbcDialects.get(url))
        try:
            yield conn
            jconn.commit()
        except BaseException:
            jconn.rollback()
            raise
    finally:
        jconn.close()


def is_postgres(options: dict[str, str]) -> bool:
    return options["url"].startswith("jdbc:postgresql:")
