"""Malformed records are never dropped silently: they land in the Delta table <source>__quarantine,
written by the source's own streaming query (a checkpoint knows the files it has read), and are counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from dagster_streamt.spark import Warehouse, read_quarantine
from dagster_streamt.spark.sources.quarantine import CAUGHT_UP, QuarantineBatches

from .helpers import rows, run

pytestmark = pytest.mark.spark

GOOD = '{"order_id": 1, "amount": 10.0}\n{"order_id": 2, "amount": 20.0}\n'
LONG = '{"order_id": 5, "amount": 5.0, "note": "' + "x" * 9000 + '"'  # truncated JSON, longer than 8 KB
BAD = '{"order_id": 3, "amount": "lots"}\n{not json at all\n'
COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "double"}]


def project_with(tmp_project: Any, materialized: str, files: dict[str, str], fmt: str = "json",
                 sql: str = 'SELECT order_id, amount FROM {{ source("orders_raw") }}', **source: Any) -> Any:
    return tmp_project({
        "sources": [{"name": "orders_raw", "format": fmt, "path": "landing", "columns": COLUMNS, **source}],
        "models": [{"name": "orders", "materialized": materialized, "sql": sql}],
    }, files)


def delta_rows(project: Any) -> list[dict[str, Any]]:
    """The quarantine as another engine reads it: delta-rs, no JVM, nothing of streamt."""
    from deltalake import DeltaTable

    table = DeltaTable(str(Warehouse.for_project(project).quarantine_dir("orders_raw")))
    return sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: (r["source_file"], r["raw_record"]))


def file_of(row: dict[str, Any]) -> str:
    """The local path of a quarantine row's file (stored as Spark names it: a URI)."""
    return unquote(urlparse(row["source_file"]).path)


def delta_version(project: Any) -> int:
    from deltalake import DeltaTable

    return DeltaTable(str(Warehouse.for_project(project).quarantine_dir("orders_raw"))).version()


def test_batch_quarantine_counts_and_never_duplicates(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD})
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert (result.rows_written, result.quarantined_rows, result.input_rows) == (2, 2, 2)
    assert [c for c, _ in result.schema] == ["order_id", "amount"]  # no _corrupt_record downstream
    q = sorted(read_quarantine(spark, Warehouse.for_project(project), "orders_raw").collect(),
               key=lambda r: r["raw_record"])
    assert [r["raw_record"] for r in q] == ['{"order_id": 3, "amount": "lots"}', "{not json at all"]
    assert {r["source"] for r in q} == {"orders_raw"}
    assert "does not match the declared columns" in q[0]["reason"] and "could not be parsed" in q[1]["reason"]
    assert all(r["source_file"].endswith("landing/a.json") and r["loaded_at"] for r in q)
    assert [r["raw_record"] for r in delta_rows(project)] == [r["raw_record"] for r in q]

    again = run(spark, project)["orders"]
    assert again.refresh == "unchanged" and again.quarantined_rows == 2  # still diverted from this model's input
    rebuilt = run(spark, project, full_refresh=["orders"])["orders"]  # every record read again ...
    assert rebuilt.refresh == "full" and rebuilt.quarantined_rows == 2
    assert read_quarantine(spark, Warehouse.for_project(project), "orders_raw").count() == 2  # ... stored once


def test_the_quarantine_query_reads_only_files_it_has_not_read(spark: Any, tmp_project: Any) -> None:
    """A table rereads its whole source; the quarantine query reads new files only; counts stay totals."""
    project = project_with(tmp_project, "table", {"landing/a b.json": GOOD + BAD})  # a space: paths round-trip
    landing = project.root / "landing"
    first = run(spark, project)["orders"]
    assert (first.rows_written, first.quarantined_rows, first.input_rows) == (2, 2, 2), first.error
    q1 = delta_rows(project)
    a = str(landing / "a b.json")
    assert [(file_of(r), r["raw_record"]) for r in q1] == [(a, '{"order_id": 3, "amount": "lots"}'),
                                                         (a, "{not json at all")]
    version = delta_version(project)
    checkpoint = project.root / ".streamt" / "checkpoints" / "orders_raw__quarantine"
    assert (checkpoint / "offsets").is_dir()

    again = run(spark, project)["orders"]  # nothing new: the query reads nothing, commits nothing
    assert (again.rows_written, again.table_rows, again.quarantined_rows, again.input_rows) == (0, 2, 2, 0)
    assert delta_rows(project) == q1 and delta_version(project) == version

    (landing / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": oops}\n')
    third = run(spark, project)["orders"]  # one new file: the table appends its rows, the query reads it alone
    assert (third.rows_written, third.table_rows, third.quarantined_rows, third.input_rows) == (1, 3, 3, 1)
    q3 = delta_rows(project)
    assert q3[:2] == q1  # the earlier rows untouched
    assert [(file_of(r), r["raw_record"]) for r in q3[2:]] == [(str(landing / "b.json"), '{"order_id": oops}')]
    assert q3[2]["run_id"] != q1[0]["run_id"] and delta_version(project) == version + 1

    (landing / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": 5, "amount": 2.0}\n')
    fourth = run(spark, project)["orders"]  # rewritten in place: the table rebuilds; the quarantine keeps
    assert (fourth.rows_written, fourth.table_rows, fourth.quarantined_rows, fourth.input_rows) == (4, 4, 3, 4)
    assert delta_rows(project) == q3  # what it read of the file (Spark's file source knows files by path)


def forget_last_batch(project: Any) -> Path:
    """What a kill between Delta's commit and the checkpoint's leaves: the last batch has no commit marker,
    so Spark runs it again. Returns the marker's path."""
    commits = project.root / ".streamt" / "checkpoints" / "orders_raw__quarantine" / "commits"
    last = max(commits.glob("[0-9]*"), key=lambda f: int(f.name))
    last.unlink()
    (commits / f".{last.name}.crc").unlink(missing_ok=True)
    # a batch read's marker: a run killed before its checkpoint's commit never gets this far
    (commits.parent / CAUGHT_UP).unlink(missing_ok=True)
    return last


def test_a_batch_replayed_after_its_delta_commit_adds_nothing(spark: Any, tmp_project: Any) -> None:
    """The batch Spark runs again has the transaction id (query id, batch id) of a commit: nothing is added."""
    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD})
    assert run(spark, project)["orders"].quarantined_rows == 2
    last = forget_last_batch(project)
    version = delta_version(project)
    again = run(spark, project, full_refresh=["orders"])["orders"]
    assert last.exists(), "the batch ran again"
    assert again.quarantined_rows == 2 and len(delta_rows(project)) == 2 and delta_version(project) == version


def test_each_batch_commits_with_its_transaction_id_whichever_engine_writes_it(
        spark: Any, tmp_project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's first batch is Spark's commit; a later small batch is delta-rs's (no Spark job replays
    the table's log to look the id up), a batch over ``LOCAL_ROWS`` Spark's again. Each commit carries
    the query's id and its batch id, so a replay of any of them adds nothing."""
    from deltalake import DeltaTable

    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD})
    target = str(Warehouse.for_project(project).quarantine_dir("orders_raw"))
    checkpoint = project.root / ".streamt" / "checkpoints" / "orders_raw__quarantine"
    assert run(spark, project)["orders"].quarantined_rows == 2
    query_id = json.loads((checkpoint / "metadata").read_text())["id"]
    landing = project.root / "landing"
    for n, (local_rows, engine, total) in enumerate([(10_000, "delta-rs", 4), (1, "Apache-Spark", 6)], start=1):
        monkeypatch.setattr(QuarantineBatches, "LOCAL_ROWS", local_rows)
        (landing / f"b{n}.json").write_text(GOOD + BAD)
        assert run(spark, project)["orders"].quarantined_rows == total
        table = DeltaTable(target)
        assert table.history(1)[0]["engineInfo"].startswith(engine)
        assert table.transaction_version(query_id) == n
        version = table.version()
        forget_last_batch(project)
        assert run(spark, project, full_refresh=["orders"])["orders"].quarantined_rows == total
        assert delta_version(project) == version and len(delta_rows(project)) == total
    got = sorted((Path(file_of(r)).name, r["raw_record"]) for r in delta_rows(project))
    assert got == sorted((f, line) for f in ("a.json", "b1.json", "b2.json") for line in BAD.splitlines())


def test_deltas_own_sink_skips_a_batch_delta_rs_committed(
        spark: Any, tmp_project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on the project's server writes with Delta's streaming sink: after a local run's delta-rs commit
    whose checkpoint commit a kill lost, that sink finds the batch's transaction id and adds nothing."""
    from dagster_streamt.spark.sources import quarantine

    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD})
    assert run(spark, project)["orders"].quarantined_rows == 2
    (project.root / "landing" / "b.json").write_text(BAD)
    assert run(spark, project)["orders"].quarantined_rows == 4  # delta-rs's commit
    version = delta_version(project)
    forget_last_batch(project)
    monkeypatch.setattr(quarantine, "is_connect", lambda _spark: True)  # the server's sink, in this session
    assert run(spark, project, full_refresh=["orders"])["orders"].quarantined_rows == 4
    assert delta_version(project) == version and len(delta_rows(project)) == 4


def test_a_quarantine_delta_rs_cannot_read_is_written_and_counted_by_spark(
        spark: Any, tmp_project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table delta-rs cannot read (a protocol it lacks, here simulated): Spark commits every batch with the
    transaction id and checks it, and a stream still reports the records its run quarantined."""
    from deltalake.exceptions import DeltaError

    from dagster_streamt.spark.sources import quarantine

    def unreadable(*_args: Any, **_kwargs: Any) -> Any:
        raise DeltaError("simulated: a reader feature delta-rs does not support")

    project = project_with(tmp_project, "stream", {"landing/a.json": GOOD + BAD})
    assert run(spark, project)["orders"].quarantined_rows == 2
    monkeypatch.setattr(quarantine, "open_delta", unreadable)
    (project.root / "landing" / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": oops}\n')
    second = run(spark, project)["orders"]
    assert (second.rows_written, second.quarantined_rows) == (1, 1)
    version = delta_version(project)
    forget_last_batch(project)
    run(spark, project)
    assert delta_version(project) == version and len(delta_rows(project)) == 3  # Spark skipped the replay


def test_a_rerun_over_the_same_files_starts_no_quarantine_query(spark: Any, tmp_project: Any) -> None:
    """The query caught up with a listing records its digest; a run that lists the same files skips
    the query (its start costs seconds in a fresh JVM), a new file runs it, and without the digest it
    runs and reads nothing twice. A source without bad records gets its (empty) table too, so it skips."""
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS},
                    {"name": "clean_raw", "format": "json", "path": "clean", "columns": COLUMNS}],
        "models": [{"name": "orders", "materialized": "table",
                    "sql": 'SELECT order_id, amount FROM {{ source("orders_raw") }}'},
                   {"name": "clean", "materialized": "table",
                    "sql": 'SELECT order_id, amount FROM {{ source("clean_raw") }}'}],
    }, {"landing/a.json": GOOD + BAD, "clean/a.json": GOOD})
    checkpoints = project.root / ".streamt" / "checkpoints"
    marker, clean_marker = (checkpoints / f"{s}__quarantine" / CAUGHT_UP for s in ("orders_raw", "clean_raw"))
    first = run(spark, project)
    assert (first["orders"].quarantined_rows, first["clean"].quarantined_rows) == (2, 0)
    assert marker.is_file() and clean_marker.is_file()
    before = {m: (m.stat().st_ino, m.read_text()) for m in (marker, clean_marker)}

    again = run(spark, project)  # the same files: no query (the digest is not even rewritten)
    assert (again["orders"].quarantined_rows, again["clean"].quarantined_rows) == (2, 0)
    assert {m: (m.stat().st_ino, m.read_text()) for m in (marker, clean_marker)} == before

    (project.root / "landing" / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": oops}\n')
    third = run(spark, project)["orders"]  # a new file: the query runs and reads it
    assert (third.rows_written, third.quarantined_rows) == (1, 3)
    assert marker.read_text() != before[marker][1]
    assert [r["raw_record"] for r in delta_rows(project)][-1] == '{"order_id": oops}'

    marker.unlink()  # no digest: the query runs, and its checkpoint has read everything already
    version = delta_version(project)
    fourth = run(spark, project, full_refresh=["orders"])["orders"]
    assert (fourth.rows_written, fourth.quarantined_rows) == (3, 3)
    assert marker.is_file() and delta_version(project) == version and len(delta_rows(project)) == 3


def test_stream_quarantine_counts_only_new_records(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, "stream", {"landing/a.json": GOOD + BAD})
    first = run(spark, project)["orders"]
    assert first.ok, first.error
    assert (first.rows_written, first.quarantined_rows) == (2, 2)

    (project.root / "landing" / "b.json").write_text('{"order_id": 4, "amount": 1.0}\n{"order_id": oops}\n')
    second = run(spark, project)["orders"]
    assert (second.rows_written, second.quarantined_rows) == (1, 1)
    wh = Warehouse.for_project(project)
    assert sorted(r["order_id"] for r in rows(spark, wh.table_location("orders"))) == [1, 2, 4]
    assert sorted(r["raw_record"] for r in delta_rows(project)) == \
        ['{"order_id": 3, "amount": "lots"}', '{"order_id": oops}', "{not json at all"]


def test_one_file_source_and_long_records(spark: Any, tmp_project: Any) -> None:
    """A source that is one file (Spark's file stream reads folders: its folder, filtered to it); a
    record longer than 8 KB is kept whole; files beside it are not read."""
    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD + LONG + "\n",
                                                  "landing/other.json": "{other bad\n"}, path="landing/a.json")
    result = run(spark, project)["orders"]
    assert (result.rows_written, result.quarantined_rows, result.input_rows) == (2, 3, 2), result.error
    assert sorted(r["raw_record"] for r in delta_rows(project)) == \
        sorted(['{"order_id": 3, "amount": "lots"}', "{not json at all", LONG])


def test_source_without_declared_columns(spark: Any, tmp_project: Any) -> None:
    """The quarantine query reads with the columns the models' read inferred."""
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "landing"}],
        "models": [{"name": "orders", "materialized": "table",
                    "sql": 'SELECT order_id FROM {{ source("orders_raw") }}'}],
    }, {"landing/a.json": GOOD + "{not json at all\n"})
    result = run(spark, project)["orders"]
    assert (result.rows_written, result.quarantined_rows) == (2, 1), result.error
    assert [(r["raw_record"], r["reason"]) for r in delta_rows(project)] == \
        [("{not json at all", "malformed json record: could not be parsed")]


@pytest.mark.parametrize("sql", [
    'SELECT order_id, amount FROM {{ source("orders_raw") }} WHERE amount > 0',  # read whole: counted as read
    'SELECT order_id, amount FROM {{ source("orders_raw") }} LIMIT 5',
    'SELECT a.order_id, b.amount FROM {{ source("orders_raw") }} a JOIN {{ source("orders_raw") }} b '
    'ON a.order_id = b.order_id',
    'SELECT o.order_id, o.amount FROM {{ source("orders_raw") }} o JOIN {{ source("empty_raw") }} e '
    'ON o.order_id = e.order_id',  # Spark skips the source's scan: counted apart
])
def test_every_query_shape_reports_the_same_counts(spark: Any, tmp_project: Any, sql: str) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS},
                    {"name": "empty_raw", "format": "json", "path": "empty", "columns": COLUMNS}],
        "models": [{"name": "orders", "materialized": "table", "sql": sql}],
    }, {"landing/a.json": GOOD + BAD, "empty/e.json": ""})
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert (result.quarantined_rows, result.input_rows) == (2, 2)
    assert len(delta_rows(project)) == 2


def test_two_tables_on_one_source_quarantine_once(spark: Any, tmp_project: Any) -> None:
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "csv", "path": "landing", "columns": COLUMNS}],
        "models": [{"name": "ids", "materialized": "table", "sql": 'SELECT order_id FROM {{ source("orders_raw") }}'},
                   {"name": "total", "materialized": "table",
                    "sql": 'SELECT sum(amount) AS total FROM {{ source("orders_raw") }}'}],
    }, {"landing/a.csv": "order_id,amount\n1,2.5\nx,3\n2,4\n", "landing/b.csv": "order_id,amount\n3,oops\n"})
    results = run(spark, project)
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    assert {r.quarantined_rows for r in results.values()} == {2}
    assert sorted(r["raw_record"] for r in delta_rows(project)) == ["3,oops", "x,3"]
    assert rows(spark, Warehouse.for_project(project).table_location("total")) == [{"total": 6.5}]


def test_an_older_parquet_quarantine_is_rebuilt_as_delta(spark: Any, tmp_project: Any) -> None:
    """A quarantine from before (Parquet files and a ledger of files read, no checkpoint) holds rows
    the query is about to write again: it is replaced by a Delta table of the files' malformed records."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD})
    old = Warehouse.for_project(project).quarantine_dir("orders_raw")
    old.mkdir(parents=True)
    pq.write_table(pa.table({"source": ["orders_raw"], "raw_record": ["{not json at all"]}), old / "part-0.parquet")
    (old / "_streamt_ledger.json").write_text("{}")
    result = run(spark, project)["orders"]
    assert result.quarantined_rows == 2, result.error
    assert sorted(r["raw_record"] for r in delta_rows(project)) == ['{"order_id": 3, "amount": "lots"}',
                                                                   "{not json at all"]
    assert not (old / "_streamt_ledger.json").exists()


def test_csv_type_errors_are_quarantined(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, "table", {"landing/a.csv": "order_id,amount\n1,2.5\nx,3\n2,4\n"}, "csv")
    result = run(spark, project)["orders"]
    assert result.ok, result.error
    assert (result.rows_written, result.quarantined_rows) == (2, 1)
    assert read_quarantine(spark, Warehouse.for_project(project), "orders_raw").first()["raw_record"] == "x,3"


def test_count_only_model_and_unused_bad_column(spark: Any, tmp_project: Any) -> None:
    """`SELECT count(*)` needs no data column (Spark would refuse a corrupt-column-only scan), and a
    bad value in a column the model does not select still keeps the row out."""
    project = tmp_project({
        "sources": [{"name": "orders_raw", "format": "json", "path": "landing", "columns": COLUMNS}],
        "models": [
            {"name": "n", "materialized": "table", "sql": 'SELECT count(*) AS n FROM {{ source("orders_raw") }}'},
            {"name": "ids", "materialized": "table", "sql": 'SELECT order_id FROM {{ source("orders_raw") }}'},
        ],
    }, {"landing/a.json": GOOD + BAD})
    results = run(spark, project)
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    wh = Warehouse.for_project(project)
    assert rows(spark, wh.table_location("n")) == [{"n": 2}]
    assert sorted(r["order_id"] for r in rows(spark, wh.table_location("ids"))) == [1, 2]  # not 3 ("lots")


def test_a_failed_model_still_leaves_its_source_quarantined(spark: Any, tmp_project: Any) -> None:
    """The quarantine query runs beside the model: a model that fails while it reads does not cut it
    short, and the run ends only after it (no query or thread left behind)."""
    import threading

    sql = 'SELECT order_id, amount FROM {{ source("orders_raw") }} WHERE assert_true(order_id < 0, \'boom\') IS NULL'
    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD}, sql=sql)
    result = run(spark, project)["orders"]
    assert not result.ok and "boom" in (result.error or "")
    assert sorted(r["raw_record"] for r in delta_rows(project)) == ['{"order_id": 3, "amount": "lots"}',
                                                                    "{not json at all"]
    assert not [t for t in threading.enumerate() if t.name.startswith("streamt-background")]
    assert not [q for q in spark.streams.active if "quarantine" in (q.name or "")]


def test_a_quarantine_table_of_other_columns_fails_the_model_with_the_fix(spark: Any, tmp_project: Any) -> None:
    project = project_with(tmp_project, "table", {"landing/a.json": GOOD + BAD})
    target = Warehouse.for_project(project).quarantine_dir("orders_raw")
    spark.createDataFrame([(1,)], "other bigint").write.format("delta").save(str(target))
    result = run(spark, project)["orders"]
    assert not result.ok
    assert "has columns other than" in (result.error or "") and "move it away" in (result.error or "")
    assert "Traceback" not in (result.error or "")
