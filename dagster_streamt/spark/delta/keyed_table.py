"""Keyed tables: a ``table`` model with streamt's ``key:`` holds one row per key, as the upsert topic
streamt's Flink job writes for it does, and a refresh from appended files upserts with Delta's ``MERGE``.

When rows share a key, the latest by the event-time column wins (the model's ``event_time``, else an
input's, when the output has it). Without one, nothing says which row is the latest: the run stops
and the table is not changed. The checks run inside the job that writes (Spark's ``raise_error``), so
a bad key costs no extra pass and can never leave half a commit.

A ``MERGE`` must carry the refresh record in its own commit, and Delta takes a MERGE's commit
metadata only from a session setting. Models run in parallel threads of one session, so the setting
is made on a session of its own (same engine, separate settings) that runs nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ...spec.connectors import model_key
from ...spec.models import Model
from ...spec.project import Project
from ...sql.identifiers import delta_path, literal
from ...sql.identifiers import quote as _q
from ..errors import ModelRunError
from ..run.observed_views import sql_over
from ..session.session import is_connect
from ..storage.store import Loc
from .delta_table import USER_METADATA, keep_change_feed
from .delta_table import write as delta_write
from .refresh_record import RefreshRecord, record_json

FAULT = "streamt-key-fault"  # raised inside Spark jobs; read back from the error by :func:`explain`
_RAISED = re.compile(r"USER_RAISED_EXCEPTION\]\s*" + FAULT + r":(shared|known):([^\n]*?)(?:\s+SQLSTATE\b|\n|$)")
_SHARED = "__streamt_shared"
_RANK = "__streamt_rank"


@dataclass(frozen=True)
class TableKey:
    """A keyed table's key columns and which of two rows sharing a key is kept."""

    model: str
    columns: tuple[str, ...]
    latest: str | None  # event-time column: its latest row per key is kept; None: a shared key is an error
    where: str  # "file:line: " of the model's `key:`, or ""


def _event_columns(project: Project, model: Model, inputs: Sequence[tuple[str, str]]) -> list[str]:
    """The model's own event-time column, then the ones of its inputs ((kind, name) pairs)."""
    out = [model.event_time.column] if model.event_time is not None else []
    out += [project.event_columns[model.name]] if model.name in project.event_columns else []
    for kind, name in inputs:
        node = (project.sources if kind == "source" else project.models).get(name)
        if node is not None and node.event_time is not None:
            out.append(node.event_time.column)
        elif name in project.event_columns and kind == "model":
            out.append(project.event_columns[name])
    return out


def table_key(project: Project, model: Model, columns: list[str],
              inputs: Sequence[tuple[str, str]] = ()) -> TableKey | None:
    """The model's key when it has one (``key: order_id``, ``key: "a, b"`` or a list), checked against
    its output ``columns``, and its event-time column: its own, else the first of its ``inputs``'
    ((kind, name) pairs) that it outputs."""
    key = model_key(model)
    if not key:
        return None
    file, line = project.where("model", model.name, "key")
    where = f"{file}:{line}: " if file else ""
    missing = [k for k in key if k not in columns]
    if missing:
        raise ModelRunError(f"model {model.name}: {where}key column(s) {', '.join(missing)} are not in its output "
                            f"({', '.join(columns)}); fix `key:` or select the column(s)", model.name)
    by_lower = {c.lower(): c for c in columns if c not in key}
    latest = next((by_lower[e.lower()] for e in _event_columns(project, model, inputs) if e.lower() in by_lower), None)
    return TableKey(model.name, key, latest, where)


def _shown(key: TableKey) -> Any:
    """``a=1, b=x``: the key's values of a row, for the error."""
    return F.concat_ws(", ", *[F.concat(F.lit(f"{k}="), F.coalesce(F.col(_q(k)).cast("string"), F.lit("NULL")))
                              for k in key.columns])


def one_row_per_key(df: DataFrame, key: TableKey) -> DataFrame:
    """``df`` with one row per key (NULL is a key value like any other): the latest row, or ``df``
    itself when no two rows share a key; a shared key without an event time fails the writing job."""
    by_key = Window.partitionBy(*[F.col(_q(k)) for k in key.columns])
    if key.latest is not None:
        ranked = df.withColumn(_RANK, F.row_number().over(by_key.orderBy(F.col(_q(key.latest)).desc_nulls_last())))
        return ranked.filter(F.col(_RANK) == 1).drop(_RANK)
    fault = F.raise_error(F.concat(F.lit(f"{FAULT}:shared:"), _shown(key)))
    counted = df.withColumn(_SHARED, F.count(F.lit(1)).over(by_key))
    return counted.filter(F.when(F.col(_SHARED) > 1, fault).otherwise(F.lit(True))).drop(_SHARED)


@contextmanager
def _own_session(spark: SparkSession) -> Iterator[SparkSession]:
    """A session with its own settings on the same engine (see the module docstring); a Connect clone
    is released afterwards (its channel would otherwise keep the client process alive)."""
    if not is_connect(spark):
        yield spark.newSession()
        return
    clone = spark.cloneSession()  # type: ignore[attr-defined]
    try:
        yield clone
    finally:
        clone.client.release_session()
        clone.client.close()


def merge(spark: SparkSession, staged: str, location: Loc, key: TableKey, record: RefreshRecord) -> dict[str, int]:
    """Upsert the rows written to ``staged`` (Parquet, one row per key: read by the merge's own session)
    into the Delta table at ``location`` in one commit that carries ``record``; Delta's counts of
    inserted and updated rows. A new row whose key is already in the table replaces it when it is not
    older (by event time); without an event time such a row fails the merge and nothing is committed.
    When no stored row lies within the new keys' bounds, the rows are appended instead (same result,
    without the MERGE's join)."""
    on = " AND ".join(f"t.{_q(k)} <=> s.{_q(k)}" for k in key.columns)
    with _own_session(spark) as own:
        source = own.read.parquet(staged)
        if key.latest is not None:
            t, s = f"t.{_q(key.latest)}", f"s.{_q(key.latest)}"
            matched = f"WHEN MATCHED AND ({t} IS NULL OR {s} >= {t}) THEN {update_all(source.columns)} "
        else:
            shown = " || ', ' || ".join(f"{literal(k + '=')} || coalesce(CAST(s.{_q(k)} AS STRING), 'NULL')"
                                        for k in key.columns)
            first = _q(key.columns[0])
            matched = f"WHEN MATCHED THEN UPDATE SET t.{first} = raise_error('{FAULT}:known:' || {shown}) "
        ranges = _key_ranges(source, key)
        if ranges and own.sql(f"SELECT 1 FROM {delta_path(location)} AS t WHERE TRUE{ranges} LIMIT 1").isEmpty():
            # no stored row lies within the new keys' bounds (Delta answers from its file statistics when
            # they are disjoint), so none can match: the rows are appended, which is the MERGE's result
            rows = source.count()
            delta_write(source, location, "append", record, change_feed=False)
            return {"inserted": rows, "updated": 0}
        text = (f"MERGE INTO {delta_path(location)} AS t USING `streamt_upsert` AS s ON {on}{ranges} "
                f"{matched}WHEN NOT MATCHED THEN {insert_all(source.columns)}")
        keep_change_feed(own, location, False)  # a table keyed since its last build
        own.conf.set(USER_METADATA, record_json(record))
        result = sql_over(own, text, {"streamt_upsert": source}).collect()
    counts = result[0].asDict() if result else {}
    return {"inserted": int(counts.get("num_inserted_rows") or 0), "updated": int(counts.get("num_updated_rows") or 0)}


def update_all(columns: Sequence[str]) -> str:
    """``UPDATE SET *`` spelled out: Delta's expansion of ``*`` cannot name a column with a backtick."""
    return "UPDATE SET " + ", ".join(f"t.{_q(c)} = s.{_q(c)}" for c in columns)


def insert_all(columns: Sequence[str]) -> str:
    """``INSERT *`` spelled out (see :func:`update_all`)."""
    return f"INSERT ({', '.join(_q(c) for c in columns)}) VALUES ({', '.join(f's.{_q(c)}' for c in columns)})"


_RANGED = ("tinyint", "smallint", "int", "bigint", "decimal", "float", "double", "string", "date", "timestamp")


def _key_ranges(source: DataFrame, key: TableKey) -> str:
    """`` AND t.k BETWEEN lo AND hi`` for each key column of an orderable type, from the new rows'
    smallest and largest key: it changes no match (a row outside cannot equal a new key) and lets Delta
    skip the table's files whose statistics lie outside, so new keys beyond the stored ones (ids,
    times) are inserted without reading the table. Empty when a new key is NULL (``<=>`` matches NULL)."""
    types = {f.name: f.dataType.simpleString() for f in source.schema.fields}
    ranged = [k for k in key.columns if types[k].split("(")[0] in _RANGED]
    if not ranged:
        return ""
    bounds = source.agg(*[F.count(F.when(F.col(_q(k)).isNull(), 1)).alias(f"n{i}") for i, k in enumerate(ranged)],
                        *[F.min(_q(k)).cast("string").alias(f"lo{i}") for i, k in enumerate(ranged)],
                        *[F.max(_q(k)).cast("string").alias(f"hi{i}") for i, k in enumerate(ranged)]).collect()[0]
    parts = []
    for i, k in enumerate(ranged):
        if bounds[f"n{i}"] or bounds[f"lo{i}"] is None:
            return ""
        lo, hi = (f"CAST({literal(bounds[f'{b}{i}'])} AS {types[k]})" for b in ("lo", "hi"))
        parts.append(f" AND t.{_q(k)} BETWEEN {lo} AND {hi}")
    return "".join(parts)


@contextmanager
def key_faults(key: TableKey | None) -> Iterator[None]:
    """A key fault raised in the block (see :func:`explain`) becomes its located error."""
    try:
        yield
    except Exception as exc:
        fault = explain(exc, key) if key is not None else None
        if fault is None:
            raise
        raise fault from None


def explain(exc: BaseException, key: TableKey) -> ModelRunError | None:
    """The located error for a key fault raised by :func:`one_row_per_key` or :func:`merge`; None for
    any other failure."""
    found = _RAISED.search(str(exc))  # the raised message, not the statement's text an error may quote
    if found is None:
        return None
    kind, values = found.group(1), found.group(2).strip().rstrip(".")
    cols = ", ".join(key.columns)
    fix = ("declare `event_time:` on the model (its latest row per key is kept) or make the key unique "
           "(the table was not changed)")
    if kind == "known":
        what = f"a row of the new input files has the key ({values}) of a row already in the table"
    else:
        what = f"rows share the key ({cols}): {values}"
    return ModelRunError(f"model {key.model}: {key.where}{what}, and nothing says which is the latest; {fix}",
                         key.model)
