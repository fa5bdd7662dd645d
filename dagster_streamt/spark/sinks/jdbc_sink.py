"""JDBC sinks: Spark loads the rows into a staging table, then one transaction publishes them.

* replace (snapshot input): ``DELETE`` + ``INSERT ... SELECT`` from staging. Readers keep seeing the old
  rows until the commit (DELETE, unlike TRUNCATE or DROP, is MVCC-safe and keeps the table's grants,
  indexes and dependent views); the first run renames the staging table into place instead.
* upsert (a key): ``INSERT ... ON CONFLICT (key) DO UPDATE`` on PostgreSQL, ``MERGE`` elsewhere.
* stream input: each micro-batch is published in a transaction that also records its batch id in
  ``streamt_sink_commits`` (same schema as the target), so a batch Spark replays after a crash is
  recognised and skipped; a new checkpoint (full refresh) restarts the table in its first batch.

The transaction runs on this process's own database connection (see jdbc_tx.py), so all of this works
the same from an embedded session, a Spark Connect client and a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame

from ..errors import ModelRunError
from .jdbc_tx import Connection, Table, db_message, is_postgres, transaction
from .sink_modes import Mode

COMMITS = "streamt_sink_commits"
STAGE_SUFFIX = "__streamt_stage"


@dataclass(frozen=True)
class JdbcTarget:
    model: str
    options: dict[str, str]
    table: Table
    mode: Mode
    key: tuple[str, ...]

    @property
    def staging(self) -> Table:
        return self.table.sibling(STAGE_SUFFIX)

    @property
    def sink_id(self) -> str:
        return f"{self.model} -> {self.table.qualified}"


def load_staging(df: DataFrame, target: JdbcTarget) -> None:
    """Spark (re)creates the staging table with the rows; nothing a reader of the target sees changes."""
    options = {k: v for k, v in target.options.items() if k.lower() not in ("truncate", "cascadetruncate")}
    options["dbtable"] = target.staging.qualified
    df.write.format("jdbc").options(**options).mode("overwrite").save()


def _insert(conn: Connection, target: JdbcTarget, columns: list[str], upsert: bool) -> str:
    t, s = target.table.qualified, target.staging.qualified
    cols = ", ".join(conn.quote(c) for c in columns)
    if not upsert:
        return f"INSERT INTO {t} ({cols}) SELECT {cols} FROM {s}"
    keys = [conn.quote(k) for k in target.key]
    rest = [conn.quote(c) for c in columns if c not in target.key]
    if is_postgres(target.options):
        action = ("DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in rest)) if rest else "DO NOTHING"
        return f"INSERT INTO {t} ({cols}) SELECT {cols} FROM {s} ON CONFLICT ({', '.join(keys)}) {action}"
    on = " AND ".join(f"t.{k} = s.{k}" for k in keys)
    update = (" WHEN MATCHED THEN UPDATE SET " + ", ".join(f"{c} = s.{c}" for c in rest)) if rest else ""
    values = ", ".join(f"s.{conn.quote(c)}" for c in columns)
    return (f"MERGE INTO {t} t USING {s} s ON ({on}){update} "
            f"WHEN NOT MATCHED THEN INSERT ({cols}) VALUES ({values})")


def _publish(conn: Connection, target: JdbcTarget, columns: list[str], clear: bool) -> None:
    """Move the staged rows into the target inside the caller's transaction."""
    if not conn.exists(target.table):
        conn.execute(f"ALTER TABLE {target.staging.qualified} RENAME TO {target.table.name}")
        if target.key:
            conn.execute(f"ALTER TABLE {target.table.qualified} ADD PRIMARY KEY "
                         f"({', '.join(conn.quote(k) for k in target.key)})")
        return
    if clear:
        conn.execute(f"DELETE FROM {target.table.qualified}")
    conn.execute(_insert(conn, target, columns, upsert=target.mode == "upsert" and not clear))
    conn.execute(f"DROP TABLE {target.staging.qualified}")


def explain(target: JdbcTarget, columns: list[str], exc: BaseException) -> ModelRunError:
    if isinstance(exc, ModelRunError):
        return exc
    text = db_message(exc)
    t = target.table.qualified
    if "ON CONFLICT" in text or "no unique or exclusion constraint" in text:
        fix = (f"the table has no primary key or unique index on ({', '.join(target.key)}), which an upsert "
               f"needs; add one: ALTER TABLE {t} ADD PRIMARY KEY ({', '.join(target.key)})")
    elif "does not exist" in text or "column" in text.lower():
        fix = (f"table {t} does not match the sink's columns ({', '.join(columns)}); alter it, or drop it so the "
               "next run creates it")
    else:
        fix = "the transaction was rolled back; the table is unchanged"
    return ModelRunError(f"sink {target.model}: {text}; {fix}", target.model)


def publish_snapshot(df: DataFrame, target: JdbcTarget, verify: object = None) -> None:
    """Replace, append or upsert a whole snapshot in one transaction. ``verify()`` runs after the rows
    are staged and before the commit (checks on the write's observed metrics)."""
    columns = list(df.columns)
    load_staging(df, target)
    try:
        with transaction(target.options, target.model) as conn:
            if callable(verify):
                verify()
            _publish(conn, target, columns, clear=target.mode == "replace")
    except Exception as exc:
        raise explain(target, columns, exc) from None


def _commits(target: JdbcTarget) -> Table:
    return Table(target.table.schema, COMMITS)


def _last_commit(conn: Connection, target: JdbcTarget) -> tuple[str, int] | None:
    commits = _commits(target)
    if not conn.exists(commits):
        conn.execute(f"CREATE TABLE {commits.qualified} (sink_id VARCHAR(400) PRIMARY KEY, "
                     "query_id VARCHAR(64) NOT NULL, batch_id BIGINT NOT NULL)")
        return None
    rows = conn.rows(f"SELECT query_id, batch_id FROM {commits.qualified} WHERE sink_id = :sink",
                     sink=target.sink_id)
    return (str(rows[0][0]), int(rows[0][1])) if rows else None


def already_written(target: JdbcTarget, query_id: str, batch_id: int) -> bool:
    """Whether this checkpoint's batch was committed before (a replay): no need to stage it again."""
    with transaction(target.options, target.model) as conn:
        last = _last_commit(conn, target)
    return last is not None and last[0] == query_id and batch_id <= last[1]


def publish_batch(df: DataFrame, target: JdbcTarget, query_id: str, batch_id: int, verify: object = None) -> bool:
    """Publish one micro-batch and record its id in the same transaction; False for a replay."""
    columns = list(df.columns)
    load_staging(df, target)
    try:
        with transaction(target.options, target.model) as conn:
            last = _last_commit(conn, target)
            if last is not None and last[0] == query_id and batch_id <= last[1]:
                conn.execute(f"DROP TABLE {target.staging.qualified}")
                return False
            if callable(verify):
                verify()
            restart = last is not None and last[0] != query_id  # a new checkpoint: rows come again
            _publish(conn, target, columns, clear=restart)
            commits = _commits(target).qualified
            if last is None:
                conn.execute(f"INSERT INTO {commits} (sink_id, query_id, batch_id) VALUES (:sink, :query, :batch)",
                             sink=target.sink_id, query=query_id, batch=batch_id)
            else:
                conn.execute(f"UPDATE {commits} SET query_id = :query, batch_id = :batch WHERE sink_id = :sink",
                             sink=target.sink_id, query=query_id, batch=batch_id)
    except Exception as exc:
        raise explain(target, columns, exc) from None
    return True
