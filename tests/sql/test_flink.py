"""Flink SQL -> Spark SQL, construct by construct: the Spark SQL Spark runs (checked against a real
Spark in tests/spark/test_flink_on_spark.py) and the column lineage of the SQL as the user wrote it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_streamt.api import load
from dagster_streamt.lineage.columns import analyze_columns
from dagster_streamt.sql import analyze, parse_query
from dagster_streamt.sql.flink import TranslationError, translate

from ..helpers import write_project

SOURCES = {"p": ["customer_id", "amount", "status", "ts"], "bid": ["item", "price", "bidtime"],
           "orders": ["id", "cur", "ts", "amount"], "rates": ["cur", "rate", "ts"]}


def spark(sql: str, streaming: bool = False) -> str | None:
    tree = parse_query(sql).tree
    assert tree is not None, parse_query(sql).error
    return translate(tree, streaming=streaming).sql


def lineage(sql: str) -> dict[str, set[str]]:
    ml = analyze_columns({"m": sql}, ["m"], SOURCES).models["m"]
    assert not ml.warnings, ml.warnings
    return {c: {f"{e.source.relation}.{e.source.column} {e.subtype}" for e in ml.fields[c]} for c in ml.columns}


def test_tumble_group_window() -> None:
    sql = ("SELECT customer_id, SUM(amount) AS total, TUMBLE_START(ts, INTERVAL '5' MINUTE) AS ws, "
           "TUMBLE_END(ts, INTERVAL '5' MINUTE) AS we, TUMBLE_ROWTIME(ts, INTERVAL '5' MINUTE) AS rt "
           "FROM p WHERE status = 'CAPTURED' GROUP BY customer_id, TUMBLE(ts, INTERVAL '5' MINUTE)")
    assert spark(sql) == (
        "SELECT\n  customer_id,\n  SUM(amount) AS total,\n  window.start AS ws,\n  window.end AS we,\n"
        "  window.end - INTERVAL '1' MILLISECOND AS rt\nFROM p\nWHERE\n  status = 'CAPTURED'\nGROUP BY\n"
        "  customer_id,\n  WINDOW(ts, '5 minutes')")
    assert lineage(sql) == {"customer_id": {"p.customer_id IDENTITY"}, "total": {"p.amount AGGREGATION"},
                            "ws": {"p.ts TRANSFORMATION"}, "we": {"p.ts TRANSFORMATION"}, "rt": {"p.ts TRANSFORMATION"}}
    assert translate(parse_query(sql).tree).window_columns == ("ts",)


def test_hop_and_session_group_windows() -> None:
    hop = ("SELECT HOP_START(ts, INTERVAL '5' MINUTE, INTERVAL '1' HOUR) AS ws, COUNT(*) AS n FROM p "
           "GROUP BY HOP(ts, INTERVAL '5' MINUTE, INTERVAL '1' HOUR)")
    assert spark(hop) == ("SELECT\n  window.start AS ws,\n  COUNT(*) AS n\nFROM p\nGROUP BY\n"
                          "  WINDOW(ts, '1 hours', '5 minutes')")  # HOP(ts, slide, size) -> window(ts, size, slide)
    session = ("SELECT customer_id, SESSION_END(ts, INTERVAL '30' MINUTE) AS e, COUNT(*) AS n FROM p "
               "GROUP BY customer_id, SESSION(ts, INTERVAL '30' MINUTE)")
    assert spark(session) == ("SELECT\n  customer_id,\n  session_window.end AS e,\n  COUNT(*) AS n\nFROM p\n"
                              "GROUP BY\n  customer_id,\n  SESSION_WINDOW(ts, '30 minutes')")
    assert lineage(session)["e"] == {"p.ts TRANSFORMATION"}


def test_window_table_functions() -> None:
    tumble = ("SELECT window_start, window_end, SUM(price) AS total FROM TABLE(TUMBLE(TABLE bid, "
              "DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end")
    assert spark(tumble) == (
        "SELECT\n  __streamt_window.start AS window_start,\n  __streamt_window.end AS window_end,\n"
        "  SUM(price) AS total\nFROM (\n  SELECT\n    *,\n    WINDOW(bidtime, '10 minutes') AS __streamt_window\n"
        "  FROM bid\n) AS bid\nGROUP BY\n  __streamt_window")
    assert lineage(tumble) == {"window_start": {"bid.bidtime TRANSFORMATION"},
                               "window_end": {"bid.bidtime TRANSFORMATION"}, "total": {"bid.price AGGREGATION"}}
    hop = ("SELECT window_start, COUNT(*) AS n FROM TABLE(HOP(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, "
           "INTERVAL '10' MINUTES)) GROUP BY window_start, window_end")
    assert "WINDOW(bidtime, '10 minutes', '5 minutes') AS __streamt_window" in spark(hop)
    cumulate = ("SELECT window_start, window_end, SUM(price) AS total FROM TABLE(CUMULATE(TABLE bid, "
                "DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end")
    out = spark(cumulate)
    assert "__streamt_cumulate_end AS window_end" in out
    assert "GROUP BY\n  __streamt_window,\n  __streamt_cumulate_end" in out
    assert "SEQUENCE(\n          __streamt_window.start + INTERVAL '2' MINUTE" in out


def test_temporal_join_reads_the_current_version() -> None:
    sql = "SELECT o.id, r.rate FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur"
    tr = translate(parse_query(sql).tree)
    assert tr.sql == "SELECT\n  o.id,\n  r.rate\nFROM orders AS o\nJOIN rates AS r\n  ON o.cur = r.cur"
    assert tr.static_tables == ("rates",) and "current version of rates" in tr.notes[0]
    assert lineage(sql) == {"id": {"orders.id IDENTITY"}, "rate": {"rates.rate IDENTITY"}}
    assert analyze(parse_query(sql).tree).joins == ("temporal join",)
    versioned_first = "SELECT o.id FROM rates FOR SYSTEM_TIME AS OF o.ts AS r JOIN orders AS o ON o.cur = r.cur"
    assert analyze(parse_query(versioned_first).tree).joins == ("temporal join",)  # the FROM side counts too


def test_interval_join_runs_as_written_with_watermarked_time_columns() -> None:
    sql = ("SELECT o.id, r.rate FROM orders AS o JOIN rates AS r ON o.cur = r.cur "
           "AND r.ts BETWEEN o.ts - INTERVAL '1' HOUR AND o.ts + INTERVAL '1' HOUR")
    tr = translate(parse_query(sql).tree)
    assert tr.sql is None and tr.window_columns == ("ts",)  # both sides get a watermark on their `ts`
    assert analyze(parse_query(sql).tree).joins == ("interval join",)


def test_functions_and_streaming_rewrites() -> None:
    assert spark("SELECT id, PROCTIME() AS pt FROM orders") == "SELECT\n  id,\n  CURRENT_TIMESTAMP() AS pt\nFROM orders"
    assert spark("SELECT cur, COLLECT(DISTINCT id) AS ids, COLLECT(id) AS all_ids FROM orders GROUP BY cur") == (
        "SELECT\n  cur,\n  COLLECT_SET(id) AS ids,\n  COLLECT_LIST(id) AS all_ids\nFROM orders\nGROUP BY\n  cur")
    distinct = "SELECT cur, COUNT(DISTINCT id) AS n FROM orders GROUP BY cur"
    assert spark(distinct) is None  # a batch query keeps its distinct count
    assert spark(distinct, streaming=True) == ("SELECT\n  cur,\n  SIZE(COLLECT_SET(id)) AS n\nFROM orders\n"
                                               "GROUP BY\n  cur")  # streams have no distinct aggregation
    assert spark("SELECT a, TO_TIMESTAMP(s, 'yyyy-MM-dd') AS t FROM x WHERE CHAR_LENGTH(a) > 2") is None


def test_spark_sql_needs_no_translation() -> None:
    assert spark("SELECT window.start AS ws, count(*) AS n FROM p GROUP BY window(ts, '1 hour')") is None


@pytest.mark.parametrize(("sql", "construct"), [
    ("SELECT id FROM orders WHERE ts > CURRENT_WATERMARK(ts)", "CURRENT_WATERMARK"),
])
def test_untranslatable_function(sql: str, construct: str) -> None:
    with pytest.raises(TranslationError) as exc:
        translate(parse_query(sql).tree)
    assert exc.value.construct == construct


def test_untranslatable_constructs_are_located_errors(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": "sources:\n  - {name: t, topic: t}\n", "models/m.yml": """\
        models:
          - name: pattern
            sql: |
              SELECT *
              FROM {{ source("t") }}
              MATCH_RECOGNIZE (PARTITION BY id ORDER BY ts MEASURES A.ts AS s PATTERN (A B+) DEFINE B AS B.v > 0)
          - name: scored
            sql: |
              SELECT id,
                     ML_PREDICT('FraudModel', amount) AS prediction
              FROM {{ source("t") }}
          - name: late
            sql: |
              SELECT id
              FROM {{ source("t") }} WHERE ts > CURRENT_WATERMARK(ts)
        """})
    errors = {d.message.split(":")[0]: d for d in load(tmp_path, use_cache=False).errors if d.code == "SQL005"}
    assert (errors["model 'pattern'"].file, errors["model 'pattern'"].line) == ("models/m.yml", 6)
    assert "window functions" in errors["model 'pattern'"].hint
    assert errors["model 'scored'"].line == 10 and "ML_PREDICT" in errors["model 'scored'"].message
    assert errors["model 'late'"].line == 15 and "CURRENT_WATERMARK" in errors["model 'late'"].message


CATALOG_TYPES = {"orders__stream": {"id": "STRING", "qty": "INT", "n": "BIGINT", "d": "DOUBLE", "ts": "TIMESTAMP(3)"},
                 "rates": {"cur": "STRING", "rate": "DOUBLE", "valid_from": "TIMESTAMP(3)"}}


def flink_typed(sql: str, streaming: bool = False) -> str | None:
    from dagster_streamt.sql.flink_types import Catalog

    catalog = Catalog(CATALOG_TYPES, {"orders__stream": "ts", "rates": "valid_from"})
    tree = parse_query(sql).tree
    assert tree is not None
    return translate(tree, streaming=streaming, catalog=catalog).sql


def test_window_tvf_over_a_quoted_view_keeps_one_quoting() -> None:
    out = flink_typed("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE `orders__stream`, DESCRIPTOR(ts), "
                      "INTERVAL '10' MINUTES)) GROUP BY window_start, window_end")
    assert out is not None and "FROM `orders__stream`\n" in out and "```" not in out


def test_flink_integer_arithmetic_and_time_rounding() -> None:
    out = flink_typed("SELECT qty / 2 AS a, n / qty AS b, d / 2 AS c, AVG(qty) AS e, SUM(qty) / COUNT(*) AS f, "
                      "FLOOR(ts TO HOUR) AS g, CEIL(ts TO MINUTE) AS h, CAST(ts AS TIMESTAMP(3)) AS i, "
                      "CEIL(d * 10) AS j FROM `orders__stream`")
    assert out is not None
    for part in ("CAST(qty DIV 2 AS INT) AS a", "n DIV qty AS b", "d / 2 AS c", "CAST(AVG(qty) AS INT) AS e",
                 "SUM(qty) DIV COUNT(*) AS f", "DATE_TRUNC('HOUR', ts) AS g", "CAST(ts AS TIMESTAMP) AS i",
                 "CAST(CEIL(d * 10) AS DOUBLE) AS j"):
        assert part in out, (part, out)
    assert "DATE_TRUNC('MINUTE', ts) + INTERVAL '1' MINUTE" in out  # CEIL: the next boundary unless on one
    assert flink_typed("SELECT qty, ts FROM `orders__stream`") is None  # nothing Flink-specific: as written


def test_temporal_join_joins_the_version_valid_at_the_row_time() -> None:
    out = flink_typed("SELECT o.id, r.rate FROM `orders__stream` AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
                      "ON o.id = r.cur")
    assert out is not None
    assert "LEAD(valid_from) OVER (PARTITION BY cur ORDER BY valid_from" in out
    assert "r.valid_from <= o.ts" in out and "o.ts < r.__streamt_valid_to" in out


def test_temporal_join_keeps_its_validity_column_out_of_stars() -> None:
    out = flink_typed("SELECT *, r.* FROM `orders__stream` AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
                      "ON o.id = r.cur")
    assert out is not None
    assert " ".join(out.split()).startswith("SELECT * EXCEPT (r.__streamt_valid_to), r.* EXCEPT (__streamt_valid_to)")


def test_flink_only_functions() -> None:
    out = spark("SELECT SPLIT_INDEX(email, '@', 1) AS domain, WEEK(ts) AS w FROM orders")
    assert out is not None and "TRY_ELEMENT_AT(SPLIT(email, " in out and "1 + 1" in out and "WEEKOFYEAR(ts) AS w" in out
    listagg = "SELECT cur, LISTAGG(DISTINCT id) AS ids FROM orders GROUP BY cur"
    assert "ARRAY_JOIN(COLLECT_SET(id), ',') AS ids" in (spark(listagg, streaming=True) or "")
