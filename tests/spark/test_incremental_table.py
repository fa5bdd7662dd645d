"""Tables refreshed from only the files appended since their last build equal a rebuild from scratch,
and every case the shortcut cannot follow exactly is rebuilt (with the reason in the result).

Selections and joins grow by an append commit; aggregations keep their state in Delta tables beside
the model's and append the appended rows' aggregation to it (compacted one row per group every few
refreshes), reading their Delta inputs' appended files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.delta.delta_table import current_commit
from dagster_streamt.spark.delta.table_state import SET, STATE

from .helpers import jsonl, rows, run

pytestmark = pytest.mark.spark

COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "customer", "type": "string"},
           {"name": "amount", "type": "double"}, {"name": "qty", "type": "int"}, {"name": "status", "type": "string"},
           {"name": "ts", "type": "string"}]
CUSTOMERS = [{"customer": "ann", "tier": "gold"}, {"customer": "bob", "tier": "silver"},
             {"customer": "cid", "tier": "gold"}, {"customer": "dan", "tier": "bronze"}]
FIRST = [
    {"order_id": 1, "customer": "ann", "amount": 10.0, "qty": 1, "status": "paid", "ts": "2024-01-01 00:10:00"},
    {"order_id": 2, "customer": "bob", "amount": None, "qty": 2, "status": "paid", "ts": "2024-01-01 00:20:00"},
    {"order_id": 3, "customer": "ann", "amount": 7.5, "qty": None, "status": "open", "ts": "2024-01-01 01:05:00"},
    {"order_id": 4, "customer": "zed", "amount": 3.0, "qty": 4, "status": "paid", "ts": "2024-01-01 01:10:00"},
]
SECOND = [  # existing and new groups, nulls, a customer without a tier, a new hour window
    {"order_id": 5, "customer": "bob", "amount": 4.0, "qty": 3, "status": "open", "ts": "2024-01-01 00:50:00"},
    {"order_id": 6, "customer": "cid", "amount": 20.0, "qty": 1, "status": "paid", "ts": "2024-01-01 02:00:00"},
    {"order_id": 7, "customer": "ann", "amount": None, "qty": None, "status": "paid", "ts": "2024-01-01 00:15:00"},
    {"order_id": 8, "customer": "dan", "amount": 1.5, "qty": 2, "status": "void", "ts": "2024-01-01 03:00:00"},
]
MODELS = [
    {"name": "clean", "sql": 'SELECT order_id, customer, amount, qty, status, CAST(ts AS TIMESTAMP) AS ts '
                             'FROM {{ source("orders_raw") }} WHERE status <> \'void\''},
    {"name": "enriched", "sql": 'SELECT o.order_id, o.customer, o.amount, o.qty, c.tier FROM {{ ref("clean") }} o '
                                'JOIN {{ source("customers_raw") }} c ON o.customer = c.customer'},
    {"name": "by_customer", "sql": 'SELECT customer, count(*) AS n, count(amount) AS priced, sum(qty) AS qty, '
                                   'min(amount) AS lo, max(amount) AS hi, avg(amount) AS mean, '
                                   'count_if(status = \'open\') AS open_orders, '
                                   'sum(amount) FILTER (WHERE status = \'paid\') AS paid '
                                   'FROM {{ ref("clean") }} GROUP BY customer HAVING count(*) >= 2'},
    {"name": "by_tier", "sql": 'SELECT tier, count(DISTINCT customer) AS customers, sum(qty) AS qty, '
                               'avg(amount) AS mean FROM {{ ref("enriched") }} GROUP BY tier'},
    {"name": "hourly", "sql": 'SELECT customer, window.start AS hour, count(*) AS n, sum(amount) AS total '
                              'FROM {{ ref("clean") }} GROUP BY customer, window(ts, \'1 hour\')'},
    {"name": "totals", "sql": 'SELECT count(*) AS n, sum(amount) AS total, count(DISTINCT customer) AS customers '
                              'FROM {{ ref("clean") }}'},
    {"name": "tier_buyers", "sql": 'SELECT tier, sum(amount) AS revenue, count(DISTINCT customer) AS buyers '
                                   'FROM {{ ref("enriched") }} GROUP BY tier'},  # the table is its state
    {"name": "ranked", "sql": 'SELECT order_id, row_number() OVER (PARTITION BY customer ORDER BY order_id) AS r '
                              'FROM {{ ref("clean") }}'},
    {"name": "all_customers", "sql": 'SELECT c.customer, o.order_id FROM {{ source("customers_raw") }} c '
                                     'LEFT JOIN {{ ref("clean") }} o ON o.customer = c.customer'},
]
NAMES = [m["name"] for m in MODELS]


def shop(tmp_project: Any, name: str = "proj", models: list[dict[str, Any]] | None = None) -> Any:
    config = {"sources": [
        {"name": "orders_raw", "format": "json", "path": "data/orders", "columns": COLUMNS},
        {"name": "customers_raw", "format": "json", "path": "data/customers",
         "columns": [{"name": "customer", "type": "string"}, {"name": "tier", "type": "string"}]}],
        "models": models or MODELS}
    return tmp_project(config, {"data/orders/part-1.json": jsonl(FIRST) + "{not json\n",
                                "data/customers/all.json": jsonl(CUSTOMERS)}, name=name)


def table(spark: Any, project: Any, name: str) -> list[tuple[Any, ...]]:
    """A table's current rows, sorted, floats rounded (sums of doubles depend on their order)."""
    location = Warehouse.for_project(project).table_location(name)
    assert location is not None
    out = [tuple(round(v, 9) if isinstance(v, float) else v for v in r.values()) for r in rows(spark, location)]
    return sorted(out, key=repr)


def add_orders(project: Any, name: str, records: list[dict[str, Any]], extra: str = "") -> Path:
    path = project.root / "data" / "orders" / name
    path.write_text(jsonl(records) + extra, encoding="utf-8")
    return path


def test_appended_files_refresh_every_shape_exactly(spark: Any, tmp_project: Any) -> None:
    project = shop(tmp_project)
    first = run(spark, project)
    assert all(r.ok and r.refresh == "full" for r in first.values()), {n: r.error for n, r in first.items()}

    add_orders(project, "part-2.json", SECOND, "{also not json\n")
    second = run(spark, project)
    assert all(r.ok for r in second.values()), {n: r.error for n, r in second.items()}
    modes = {n: r.refresh for n, r in second.items()}
    assert modes == {"clean": "append", "enriched": "append", "by_customer": "merge", "by_tier": "merge",
                     "hourly": "merge", "totals": "merge", "tier_buyers": "merge", "ranked": "full",
                     "all_customers": "full"}
    assert "1 new file of source orders_raw" in (second["clean"].refresh_note or "")
    assert "window function" in (second["ranked"].refresh_note or "")
    assert "right side of a LEFT JOIN" in (second["all_customers"].refresh_note or "")
    assert second["clean"].input_rows == 4  # only the new file's valid records were read
    assert (second["clean"].rows_written, second["clean"].table_rows) == (3, 7)  # this run's rows; the table's
    assert (second["enriched"].rows_written, second["enriched"].table_rows) == (3, 6)

    # the same data built from scratch in a second project gives the same rows everywhere
    fresh = shop(tmp_project, name="fresh")
    add_orders(fresh, "part-2.json", SECOND, "{also not json\n")
    rebuilt = run(spark, fresh)
    assert all(r.refresh == "full" for r in rebuilt.values())
    for name in NAMES:
        assert table(spark, project, name) == table(spark, fresh, name), name
    assert table(spark, project, "by_customer") == [
        ("ann", 3, 2, 1, 7.5, 10.0, 8.75, 1, 10.0), ("bob", 2, 1, 5, 4.0, 4.0, 4.0, 1, None)]
    assert table(spark, project, "totals") == [(7, 44.5, 4)]
    assert table(spark, project, "tier_buyers") == [("gold", 37.5, 2), ("silver", 4.0, 1)]
    quarantine = rows(spark, Warehouse.for_project(project).quarantine_dir("orders_raw"))
    assert sorted(r["raw_record"] for r in quarantine) == ["{also not json", "{not json"]


def test_an_append_counts_the_source_it_reads_whole_with_its_own_scan(spark: Any, tmp_project: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An increment joining the new files of one source with all of another counts the other's rows as
    its write reads them (no count job of its own), and still reports them when the join never reads
    that side (no valid row in the new file: Spark may skip it)."""
    models = [{"name": "tiers", "sql": 'SELECT o.order_id, c.tier FROM {{ source("orders_raw") }} o '
                                       'JOIN {{ source("customers_raw") }} c ON o.customer = c.customer'}]
    project = shop(tmp_project, models=models)
    assert run(spark, project)["tiers"].input_rows == len(FIRST) + len(CUSTOMERS)  # valid records, customers
    add_orders(project, "part-2.json", SECOND)
    frame = type(spark.range(1))
    counts: list[str] = []
    count = frame.count
    monkeypatch.setattr(frame, "count", lambda df: counts.append("count") or count(df))
    second = run(spark, project)["tiers"]
    monkeypatch.undo()
    assert (second.refresh, second.rows_written, second.input_rows) == ("append", 4, 4 + len(CUSTOMERS))
    assert counts == []  # the customers were counted by the write's own scan
    add_orders(project, "part-3.json", [], "{only a broken record\n")
    third = run(spark, project)["tiers"]
    assert (third.refresh, third.rows_written, third.input_rows, third.quarantined_rows) == \
        ("append", 0, len(CUSTOMERS), 2), third
    assert len(table(spark, project, "tiers")) == 3 + 4  # zed has no tier


def test_a_table_input_is_followed_through_its_delta_log_with_deletion_vectors_and_column_mapping(
        spark: Any, tmp_project: Any) -> None:
    """An upstream table with deletion vectors and column mapping on (stored under physical column names,
    rows hidden by a vector rather than a rewrite): its appends reach the reader through Delta's change
    feed, a delete is a rewrite the reader rebuilds from, and the reader's rows are the join's every time."""
    models = [m for m in MODELS if m["name"] in ("clean", "enriched")]
    project = shop(tmp_project, models=models)
    assert all(r.ok for r in run(spark, project).values())
    clean = Warehouse.for_project(project).data_dir("clean")
    spark.sql(f"ALTER TABLE delta.`{clean}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
              "'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '3', 'delta.minWriterVersion' = '7')")
    spark.sql(f"ALTER TABLE delta.`{clean}` RENAME COLUMN amount TO amount_renamed")  # physical names differ now
    spark.sql(f"ALTER TABLE delta.`{clean}` RENAME COLUMN amount_renamed TO amount")
    rebuilt = run(spark, project)  # commits of someone else's: clean rebuilds (an overwrite), its reader too
    assert {n: r.refresh for n, r in rebuilt.items()} == {"clean": "full", "enriched": "full"}
    assert "model clean was rewritten at version 1 (SET TBLPROPERTIES)" in (rebuilt["enriched"].refresh_note or "")

    add_orders(project, "part-2.json", SECOND)
    second = run(spark, project)
    assert {n: r.refresh for n, r in second.items()} == {"clean": "append", "enriched": "append"}
    assert second["enriched"].refresh_note == "appended the rows of 1 new version of model clean"
    assert second["enriched"].input_rows == 3 + len(CUSTOMERS)  # clean's appended rows (from its log), customers
    tiers = {c["customer"]: c["tier"] for c in CUSTOMERS}
    expected = sorted((o["order_id"], o["customer"], o["amount"], o["qty"], tiers[o["customer"]])
                      for o in FIRST + SECOND if o["status"] != "void" and o["customer"] in tiers)
    assert sorted(table(spark, project, "enriched")) == expected  # amount read under its logical name

    spark.sql(f"DELETE FROM delta.`{clean}` WHERE customer = 'bob'")  # a deletion vector: no data file changes
    metrics = spark.sql(f"DESCRIBE HISTORY delta.`{clean}` LIMIT 1").first()["operationMetrics"]
    assert int(metrics["numDeletionVectorsAdded"]) > 0 and metrics["numCopiedRows"] == "0"
    third = run(spark, project, ["enriched"])["enriched"]
    assert third.refresh == "full" and "(DELETE)" in (third.refresh_note or ""), third.refresh_note
    assert third.input_rows == 5 + len(CUSTOMERS)  # the log's row count of clean, net of the deletion vector
    assert sorted(table(spark, project, "enriched")) == [r for r in expected if r[1] != "bob"]


def test_a_run_renders_no_model_again(spark: Any, tmp_project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """What runs is the render that lineage and validation saw: compiling the project renders each model
    once, and runs after it (a full build, then an incremental one) bind that render to their views instead
    of rendering again; a project run without a compile renders each model once, for every run after."""
    from collections import Counter

    from dagster_streamt.compile import render as render_module
    from dagster_streamt.compile.compiler import compile_project

    renders: list[str] = []
    real = render_module.render_sql

    def counting(name: str, *args: Any, **kwargs: Any) -> Any:
        renders.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(render_module, "render_sql", counting)
    # tables, as written: a compile would otherwise infer streams for models reading files (streamt's rule)
    models = [{**m, "materialized": "table"} for m in MODELS if m["name"] in ("clean", "enriched", "by_customer")]
    names = [m["name"] for m in models]
    compiled = shop(tmp_project, models=models)
    compile_project(compiled)
    assert Counter(renders) == Counter(names)
    renders.clear()
    uncompiled = shop(tmp_project, name="fresh", models=models)
    for project in (compiled, uncompiled):
        assert all(r.ok for r in run(spark, project).values())
        add_orders(project, "part-2.json", SECOND)
        assert {r.refresh for r in run(spark, project).values()} == {"append", "merge"}
    assert Counter(renders) == Counter(names), "the compiled project renders nothing; the other each model once"
    for name in names:
        assert table(spark, compiled, name) == table(spark, uncompiled, name), name


def test_nothing_new_keeps_every_version(spark: Any, tmp_project: Any) -> None:
    project = shop(tmp_project)
    run(spark, project)
    wh = Warehouse.for_project(project)
    before = {n: wh.table_location(n) for n in NAMES}
    again = run(spark, project)
    assert {n: r.refresh for n, r in again.items()} == {n: "unchanged" for n in NAMES}
    assert {n: wh.table_location(n) for n in NAMES} == before
    assert (again["clean"].rows_written, again["clean"].table_rows, again["clean"].input_rows) == (0, 4, 0)


def test_what_cannot_be_followed_is_rebuilt(spark: Any, tmp_project: Any) -> None:
    project = shop(tmp_project)
    run(spark, project, ["clean", "by_customer"])
    path = project.root / "data" / "orders" / "part-1.json"
    path.write_text(jsonl(FIRST[:2]), encoding="utf-8")  # a file rewritten in place
    result = run(spark, project, ["clean", "by_customer"])
    assert result["clean"].refresh == "full"
    assert "rewritten" in (result["clean"].refresh_note or "")
    assert table(spark, project, "clean")[0][0] == 1 and len(table(spark, project, "clean")) == 2
    assert result["by_customer"].refresh == "full"  # its input table was rebuilt: new files

    add_orders(project, "part-2.json", SECOND)
    forced = run(spark, project, ["clean"], full_refresh=["clean"])["clean"]
    assert forced.refresh == "full" and forced.refresh_note == "full refresh requested"
    os.remove(project.root / "data" / "orders" / "part-2.json")  # a file gone
    gone = run(spark, project, ["clean"])["clean"]
    assert gone.refresh == "full" and len(table(spark, project, "clean")) == 2


def test_an_aggregation_without_a_state_says_why_and_equals_a_rebuild(spark: Any, tmp_project: Any) -> None:
    """An average of decimals: a state of sums and counts would give it another decimal type, so it keeps
    none; the first run says so, later runs rebuild saying why, and the rows are a rebuild's."""
    models = [{"name": "avg_dec", "sql": 'SELECT customer, avg(CAST(amount AS DECIMAL(10, 2))) AS mean '
                                         'FROM {{ source("orders_raw") }} GROUP BY customer'}]
    project = shop(tmp_project, models=models)
    first = run(spark, project)["avg_dec"]
    assert first.refresh == "full" and "keeps no aggregation state: a state of its partial aggregates would not " \
        "give its column types" in (first.refresh_note or ""), first.refresh_note
    add_orders(project, "part-2.json", SECOND)
    second = run(spark, project)["avg_dec"]
    assert second.refresh == "full" and "does not reproduce its column types" in (second.refresh_note or "")
    fresh = shop(tmp_project, name="fresh", models=models)
    add_orders(fresh, "part-2.json", SECOND)
    assert run(spark, fresh)["avg_dec"].ok
    assert table(spark, project, "avg_dec") == table(spark, fresh, "avg_dec")


def test_changed_sql_or_volatile_sql_is_rebuilt(spark: Any, tmp_project: Any) -> None:
    models = [{"name": "clean", "sql": 'SELECT order_id, amount FROM {{ source("orders_raw") }}'},
              {"name": "stamped", "sql": 'SELECT order_id, current_timestamp() AS at FROM {{ source("orders_raw") }}'}]
    project = shop(tmp_project, models=models)
    run(spark, project)
    again = run(spark, project)
    assert again["clean"].refresh == "unchanged"
    assert again["stamped"].refresh == "full" and "current_timestamp" in (again["stamped"].refresh_note or "")
    changed = shop(tmp_project, name="proj", models=[
        {"name": "clean", "sql": 'SELECT order_id, amount * 2 AS amount FROM {{ source("orders_raw") }}'},
        models[1]])
    result = run(spark, changed, ["clean"])["clean"]
    assert result.refresh == "full" and "SQL" in (result.refresh_note or "")
    assert sorted(r[1] for r in table(spark, changed, "clean") if r[1] is not None) == [6.0, 15.0, 20.0]


def test_aggregate_state_is_a_delta_table_recorded_by_the_model_commit(spark: Any, tmp_project: Any) -> None:
    project = shop(tmp_project)
    run(spark, project, ["clean", "by_customer"])
    wh = Warehouse.for_project(project)
    state = wh.model_dir("by_customer") / STATE
    first = current_commit(wh.data_dir("by_customer"))
    assert first is not None and first.record is not None and first.record.states == {STATE: 0}
    assert (state / "_delta_log").is_dir()
    add_orders(project, "part-2.json", SECOND)
    merged = run(spark, project, ["clean", "by_customer"])["by_customer"]
    assert merged.refresh == "merge", merged.refresh_note
    second = current_commit(wh.data_dir("by_customer"))
    assert second is not None and second.record is not None and second.record.states == {STATE: 1}
    history = spark.sql(f"DESCRIBE HISTORY delta.`{state}`").collect()
    assert sorted((r["version"], r["operation"]) for r in history) == [(0, "WRITE"), (1, "WRITE")]
    # a run killed between its MERGE and the model's commit leaves the state a version ahead of the record:
    stored = spark.read.format("delta").load(str(state))  # (a commit the model's record does not name)
    stored.limit(1).write.format("delta").mode("append").save(str(state))
    add_orders(project, "part-3.json", [dict(SECOND[0], order_id=9)])
    result = run(spark, project, ["clean", "by_customer"])["by_customer"]
    assert result.refresh == "full" and "state" in (result.refresh_note or "")
    assert ("bob", 3, 2, 8, 4.0, 4.0, 4.0, 2, None) in table(spark, project, "by_customer")


def test_appended_table_is_compacted(spark: Any, tmp_project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_streamt.spark.tables import refresh_plan

    monkeypatch.setattr(refresh_plan, "COMPACT_MIN_FILES", 3)
    monkeypatch.setattr(refresh_plan, "COMPACT_FACTOR", 1)
    models = [{"name": "clean", "sql": 'SELECT order_id, amount FROM {{ source("orders_raw") }}'}]
    project = shop(tmp_project, models=models)
    run(spark, project)
    modes = []
    for i in range(3):
        add_orders(project, f"more-{i}.json", [dict(FIRST[0], order_id=100 + i)])
        modes.append(run(spark, project)["clean"].refresh)
    assert modes[0] == "append" and "full" in modes
    assert len(table(spark, project, "clean")) == 7


def test_aggregation_state_grows_by_appends_and_is_compacted(spark: Any, tmp_project: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_streamt.spark.tables import table as table_module

    monkeypatch.setattr(table_module, "STATE_COMPACT_EVERY", 2)
    names = ["clean", "enriched", "by_customer", "by_tier", "totals"]
    models = [m for m in MODELS if m["name"] in names]
    project, fresh = shop(tmp_project, models=models), shop(tmp_project, name="fresh", models=models)
    run(spark, project)
    state = Warehouse.for_project(project).model_dir("by_tier") / STATE
    modes, sizes = [], []
    batches = [SECOND[:2], SECOND[2:], [dict(FIRST[0], order_id=30, customer="cid", amount=2.5)]]
    for i, batch in enumerate(batches):
        add_orders(project, f"more-{i}.json", batch)
        add_orders(fresh, f"more-{i}.json", batch)
        result = run(spark, project)
        assert {result[n].refresh for n in ("by_customer", "by_tier", "totals")} == {"merge"}, \
            {n: r.refresh_note for n, r in result.items()}
        last = spark.sql(f"DESCRIBE HISTORY delta.`{state}` LIMIT 1").collect()[0]
        modes.append(last["operationParameters"]["mode"])
        sizes.append(len(rows(spark, state, "delta")))
    # the changed groups appended, every second refresh one row per group again (gold, silver: 2 tiers
    # after the build; bronze has no order yet; a void order is filtered out)
    assert modes == ["Append", "Overwrite", "Append"]
    assert sizes == [2 + 2, 2, 2 + 1]
    run(spark, fresh)
    for name in names:
        assert table(spark, project, name) == table(spark, fresh, name), name


def test_distinct_sets_grow_by_new_pairs_only(spark: Any, tmp_project: Any) -> None:

    models = [{"name": "per_status", "sql": 'SELECT status, count(DISTINCT qty) AS sizes, sum(DISTINCT qty) AS qtys, '
                                            'avg(DISTINCT qty) AS mean_qty, count(*) AS n, sum(amount) AS total '
                                            'FROM {{ source("orders_raw") }} GROUP BY status'},
              {"name": "everyone", "sql": 'SELECT count(DISTINCT customer) AS customers, count(*) AS n '
                                          'FROM {{ source("orders_raw") }}'}]
    project = shop(tmp_project, models=models)
    fresh = shop(tmp_project, name="fresh", models=models)
    run(spark, project)
    wh = Warehouse.for_project(project)
    set_path = wh.model_dir("per_status") / SET
    first_set = {p.name for p in set_path.glob("part-*")}
    batches = [[dict(FIRST[0], order_id=20, customer=None, qty=None), dict(FIRST[1], order_id=21)],  # NULLs, seen pairs
               [dict(FIRST[0], order_id=22, customer=None, qty=9), dict(SECOND[1], order_id=23, status="open")]]
    for i, batch in enumerate(batches):
        add_orders(project, f"more-{i}.json", batch)
        add_orders(fresh, f"more-{i}.json", batch)
        result = run(spark, project)
        assert {r.refresh for r in result.values()} == {"merge"}, {n: r.refresh_note for n, r in result.items()}
    assert first_set <= {p.name for p in set_path.glob("part-*")}  # the old pairs are kept as they were
    ops = spark.sql(f"DESCRIBE HISTORY delta.`{set_path}`").collect()
    assert sorted(r["operation"] for r in ops) == ["WRITE", "WRITE", "WRITE"]  # appends: no file rewritten
    pairs = rows(spark, set_path, "delta")
    assert len(pairs) == len({(r["status"], r["_streamt_d0"]) for r in pairs})  # each pair once, NULL included
    run(spark, fresh)
    for name in ("per_status", "everyone"):
        assert table(spark, project, name) == table(spark, fresh, name), name
    assert table(spark, project, "everyone") == [(4, 8)]  # ann, bob, zed, then cid; NULL is no customer


def test_a_rewrite_with_the_same_size_and_time_is_read_again(spark: Any, tmp_project: Any) -> None:
    models = [{"name": "clean", "sql": 'SELECT order_id, customer, amount FROM {{ source("orders_raw") }}'},
              {"name": "per_customer", "sql": 'SELECT customer, count(*) AS n, sum(amount) AS total '
                                              'FROM {{ ref("clean") }} GROUP BY customer'}]
    project = shop(tmp_project, models=models)
    path = project.root / "data" / "orders" / "part-1.json"
    first = run(spark, project)
    assert all(r.ok for r in first.values())
    before = path.stat()
    rewritten = [dict(r, customer={"ann": "amy", "bob": "bea", "zed": "zoe"}[r["customer"]],
                      amount=None if r["amount"] is None else r["amount"] + 1) for r in FIRST]
    text = jsonl(rewritten) + "{not json\n"
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same modification time
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    again = run(spark, project)
    assert again["clean"].refresh == "full" and "rewritten" in (again["clean"].refresh_note or "")
    assert table(spark, project, "clean") == sorted(
        ((r["order_id"], r["customer"], r["amount"]) for r in rewritten), key=repr)
    assert table(spark, project, "per_customer") == [("amy", 2, 19.5), ("bea", 1, None), ("zoe", 1, 4.0)]

    os.utime(path)  # merely touched: read again in full, never counted twice
    touched = run(spark, project)
    assert touched["clean"].refresh == "full"
    assert len(table(spark, project, "clean")) == 4
    os.rename(path, path.with_name("renamed.json"))  # renamed: the same rows, once
    renamed = run(spark, project)
    assert renamed["clean"].refresh == "full"
    assert table(spark, project, "per_customer") == [("amy", 2, 19.5), ("bea", 1, None), ("zoe", 1, 4.0)]

    add_orders(project, "part-2.json", [dict(SECOND[1], customer="amy")])  # appends still follow exactly
    appended = run(spark, project)
    assert (appended["clean"].refresh, appended["per_customer"].refresh) == ("append", "merge")
    assert table(spark, project, "per_customer") == [("amy", 3, 39.5), ("bea", 1, None), ("zoe", 1, 4.0)]


def test_a_state_that_is_the_models_rows_lives_in_the_models_table(spark: Any, tmp_project: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Every column a group key, a merged value or a DISTINCT tally: no ``_streamt_state`` beside the table;
    each refresh reads the groups from the table's version and commits the merged ones as its next."""
    from dagster_streamt.sql.aggregate_state import AggregateState

    models = [*(m for m in MODELS if m["name"] in ("clean", "enriched")),
              {"name": "tier_sales", "sql": 'SELECT tier, sum(amount) AS revenue, count(DISTINCT customer) AS buyers, '
                                            'max(qty) AS most FROM {{ ref("enriched") }} GROUP BY tier'},
              {"name": "per_customer", "sql": 'SELECT count(*) AS n, customer, sum(amount) AS total '
                                              'FROM {{ ref("clean") }} GROUP BY customer'}]
    project, fresh = shop(tmp_project, models=models), shop(tmp_project, name="fresh", models=models)
    wh = Warehouse.for_project(project)
    monkeypatch.setattr(AggregateState, "projection", lambda self: None)  # first the other layout, as before
    run(spark, project)
    assert (wh.model_dir("per_customer") / STATE / "_delta_log").is_dir()
    monkeypatch.undo()
    records = []
    for i, batch in enumerate([SECOND[:2], SECOND[2:], [dict(FIRST[0], order_id=30, customer="dan", amount=2.5)]]):
        add_orders(project, f"more-{i}.json", batch)
        add_orders(fresh, f"more-{i}.json", batch)
        result = run(spark, project)
        assert (result["tier_sales"].refresh, result["per_customer"].refresh) == (("full", "full") if i == 0 else
                                                                                  ("merge", "merge")), result
        for name in ("tier_sales", "per_customer"):
            assert not (wh.model_dir(name) / STATE).exists(), name  # the other layout's state went with its build
            commit = current_commit(wh.data_dir(name))
            assert commit is not None and commit.record is not None
            records.append(commit.record.states)
    # the set rewritten by the rebuild (version 1), then grown by an append when a refresh brings new pairs
    # (the second batch brings none: ann is a gold buyer already); no state table
    assert records == [{SET: 1}, {}, {SET: 1}, {}, {SET: 2}, {}], records
    assert not (wh.model_dir("per_customer") / SET).exists()
    run(spark, fresh)
    for name in ("tier_sales", "per_customer"):
        assert table(spark, project, name) == table(spark, fresh, name), name
    assert sorted(table(spark, project, "tier_sales")) == [("bronze", 2.5, 1, 1), ("gold", 37.5, 2, 1),
                                                          ("silver", 4.0, 1, 3)]
    # a run killed after extending the set but before the model's commit: the set a version ahead of the record
    set_path = wh.model_dir("tier_sales") / SET
    spark.read.format("delta").load(str(set_path)).limit(1).write.format("delta").mode("append").save(str(set_path))
    add_orders(project, "more-3.json", [dict(SECOND[1], order_id=31)])  # cid's 20.0 again
    again = run(spark, project)
    assert again["tier_sales"].refresh == "full" and again["per_customer"].refresh == "merge"
    assert sorted(table(spark, project, "tier_sales")) == [("bronze", 2.5, 1, 1), ("gold", 57.5, 2, 1),
                                                          ("silver", 4.0, 1, 3)]
