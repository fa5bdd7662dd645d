"""Incremental refresh of table models, read from their SQL alone: which functions make a query
volatile, which inputs may grow by appends (:mod:`dagster_streamt.sql.appends`), how an aggregation
splits into a mergeable state and a final query (:mod:`dagster_streamt.sql.aggregate_state`), and
the plan that combines them (:mod:`dagster_streamt.sql.incremental`). No Spark: SQL text only."""

from __future__ import annotations

import doctest

import pytest
from sqlglot import exp

from dagster_streamt.sql import appends, incremental, parse_query
from dagster_streamt.sql.aggregate_state import AggregateState, aggregate_state
from dagster_streamt.sql.appends import aggregates_at, append_blockers, rename_tables, volatile
from dagster_streamt.sql.incremental import incremental_plan

# the peer pipeline's two aggregations (/work/shared/peer-bench/streamt_project.yml), refs rendered
HOURLY = ("SELECT country, window.start AS window_start, window.end AS window_end,\n"
          "       count(*) AS order_count, sum(amount) AS total_amount, avg(amount) AS avg_amount\n"
          "FROM orders_clean GROUP BY country, window(ts, '1 hour')")
TIERS = ("SELECT tier, sum(amount) AS revenue, count(DISTINCT customer_id) AS distinct_customers\n"
         "FROM customer_orders GROUP BY tier")

SUBQUERY = "a subquery expression (IN, EXISTS or a scalar subquery)"
SET_OP = "a set operation (UNION, INTERSECT, EXCEPT)"
INNER_AGG = "an aggregation inside the query"


def tree(sql: str) -> exp.Query:
    parsed = parse_query(sql)
    assert parsed.tree is not None, parsed.error
    return parsed.tree


def split(sql: str) -> AggregateState:
    state = aggregate_state(tree(sql))
    assert isinstance(state, AggregateState), state
    return state


def merges(state: AggregateState) -> list[tuple[str, str]]:
    return [(v.name, v.merge) for v in state.values]


# --- volatile ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sql", "fn"), [
    ("SELECT id, rand() AS r FROM t", "rand"),
    ("SELECT id, random() AS r FROM t", "rand"),  # sqlglot reads random() as rand()
    ("SELECT id, randn(7) AS r FROM t", "randn"),
    ("SELECT id, uuid() AS u FROM t", "uuid"),
    ("SELECT id, now() AS ts FROM t", "now"),
    ("SELECT id, current_timestamp() AS ts FROM t", "current_timestamp"),
    ("SELECT id, current_timestamp AS ts FROM t", "current_timestamp"),
    ("SELECT id, current_date() AS d FROM t", "current_date"),
    ("SELECT id, current_date AS d FROM t", "current_date"),
    ("SELECT id, curdate() AS d FROM t", "current_date"),
    ("SELECT id, unix_timestamp() AS s FROM t", "current_timestamp"),  # parsed as unix_timestamp(current_timestamp())
    ("SELECT id, shuffle(items) AS s FROM t", "shuffle"),
    ("SELECT id, monotonically_increasing_id() AS m FROM t", "monotonically_increasing_id"),
    ("SELECT id FROM t WHERE rand() < 0.1", "rand"),  # anywhere in the query
    ("SELECT id FROM t WHERE id IN (SELECT id FROM u WHERE ts < now())", "now"),
    ("SELECT id, unix_timestamp(ts) AS s FROM t", None),
    ("SELECT id, unix_timestamp(ts, 'yyyy-MM-dd') AS s FROM t", None),
    ("SELECT upper(name) AS n, abs(amount) AS a, date_add(d, 1) AS d1, coalesce(x, 0) AS x FROM t", None),
    ("SELECT k, count(*) AS n FROM t GROUP BY k", None),
])
def test_volatile(sql: str, fn: str | None) -> None:
    assert volatile(tree(sql)) == fn


# --- append_blockers ----------------------------------------------------------------------------------------------

OC = ["orders", "customers"]


@pytest.mark.parametrize(("sql", "relations", "blocked"), [
    ("SELECT id, amount * 2 AS doubled FROM orders WHERE amount > 0", ["orders"], {}),
    ("SELECT id FROM orders WHERE amount > 0", ["orders", "customers"], {}),  # a relation it does not read
    ("SELECT o.id, c.tier FROM orders o JOIN customers c ON o.cid = c.id", OC, {}),
    ("SELECT o.id, c.tier FROM orders o, customers c WHERE o.cid = c.id", OC, {}),
    ("SELECT o.id, c.tier FROM orders o CROSS JOIN customers c", OC, {}),
    ("SELECT o.id, c.tier FROM orders o LEFT JOIN customers c ON o.cid = c.id", OC,
     {"customers": "the right side of a LEFT JOIN"}),
    ("SELECT o.id, c.tier FROM orders o LEFT OUTER JOIN customers c ON o.cid = c.id", OC,
     {"customers": "the right side of a LEFT JOIN"}),
    ("SELECT o.id, c.tier FROM orders o RIGHT JOIN customers c ON o.cid = c.id", OC,
     {"orders": "the left side of a RIGHT JOIN"}),
    ("SELECT o.id, c.tier FROM orders o FULL JOIN customers c ON o.cid = c.id", OC,
     {"orders": "a FULL OUTER JOIN", "customers": "a FULL OUTER JOIN"}),
    ("SELECT o.id FROM orders o LEFT SEMI JOIN customers c ON o.cid = c.id", OC,
     {"customers": "the right side of a LEFT SEMI JOIN"}),
    ("SELECT o.id FROM orders o LEFT ANTI JOIN customers c ON o.cid = c.id", OC,
     {"customers": "the right side of a LEFT ANTI JOIN"}),
    # a later outer join blocks the relations joined before it, not only its own side
    ("SELECT o.id FROM orders o JOIN customers c ON o.cid = c.id LEFT JOIN regions r ON c.rid = r.id",
     ["orders", "customers", "regions"], {"regions": "the right side of a LEFT JOIN"}),
    ("SELECT o.id FROM orders o JOIN customers c ON o.cid = c.id RIGHT JOIN regions r ON c.rid = r.id",
     ["orders", "customers", "regions"],
     {"orders": "the left side of a RIGHT JOIN", "customers": "the left side of a RIGHT JOIN"}),
    ("SELECT a.id, b.id AS parent FROM orders a JOIN orders b ON a.parent = b.id", ["orders"],
     {"orders": "orders is read 2 times"}),
    ("SELECT id FROM orders WHERE cid IN (SELECT id FROM customers)", OC, {"customers": SUBQUERY}),
    ("SELECT id FROM orders WHERE cid NOT IN (SELECT id FROM customers)", OC, {"customers": SUBQUERY}),
    ("SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.cid)", OC,
     {"customers": SUBQUERY}),
    ("SELECT id, (SELECT tier FROM customers c WHERE c.id = o.cid) AS tier FROM orders o", OC,
     {"customers": SUBQUERY}),
    ("SELECT o.id FROM orders o JOIN customers c ON o.cid = c.id AND c.id IN (SELECT cid FROM vip)",
     ["orders", "customers", "vip"], {"vip": SUBQUERY}),
    # a scalar subquery that aggregates is blocked one step earlier, by its aggregation
    ("SELECT id, (SELECT max(tier) FROM customers) AS top FROM orders", OC, {"customers": INNER_AGG}),
    ("SELECT DISTINCT cid FROM orders", ["orders"], {"orders": "SELECT DISTINCT"}),
    ("SELECT id, row_number() OVER (PARTITION BY cid ORDER BY ts) AS rn FROM orders", ["orders"],
     {"orders": "a window function (OVER)"}),
    ("SELECT id FROM orders QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1", ["orders"],
     {"orders": "QUALIFY"}),
    ("SELECT id FROM orders LIMIT 10", ["orders"], {"orders": "LIMIT"}),
    ("SELECT id FROM (SELECT id FROM orders LIMIT 5) x", ["orders"], {"orders": "LIMIT"}),
    ("SELECT id FROM orders ORDER BY id", ["orders"], {"orders": "ORDER BY"}),
    ("SELECT id FROM orders SORT BY id", ["orders"], {"orders": "SORT BY"}),
    ("SELECT id FROM orders CLUSTER BY id", ["orders"], {"orders": "CLUSTER BY"}),
    ("SELECT id FROM orders UNION ALL SELECT id FROM customers", OC, {"orders": SET_OP, "customers": SET_OP}),
    ("SELECT id FROM orders INTERSECT SELECT id FROM customers", OC, {"orders": SET_OP, "customers": SET_OP}),
    ("WITH big AS (SELECT * FROM orders WHERE amount > 100) SELECT id FROM big", ["orders"], {}),
    ("WITH big AS (SELECT * FROM orders WHERE amount > 100) SELECT a.id FROM big a JOIN big b ON a.id = b.id",
     ["orders"], {"orders": "CTE big read 2 times"}),
    ("WITH a AS (SELECT * FROM orders), b AS (SELECT * FROM a WHERE x > 0) SELECT id FROM b", ["orders"], {}),
    ("WITH a AS (SELECT DISTINCT id FROM orders) SELECT id FROM a", ["orders"], {"orders": "SELECT DISTINCT"}),
    ("WITH big AS (SELECT * FROM orders) SELECT b.id FROM big b LEFT JOIN customers c ON b.cid = c.id", OC,
     {"customers": "the right side of a LEFT JOIN"}),
    ("SELECT o.id, s.total FROM orders o JOIN (SELECT cid, sum(amount) AS total FROM payments GROUP BY cid) s "
     "ON o.cid = s.cid", ["orders", "payments"], {"payments": INNER_AGG}),
    ("SELECT id FROM (SELECT * FROM orders) x WHERE id > 1", ["orders"], {}),
    ("SELECT id FROM orders TABLESAMPLE (10 PERCENT)", ["orders"], {"orders": "TABLESAMPLE"}),
])
def test_append_blockers(sql: str, relations: list[str], blocked: dict[str, str]) -> None:
    assert dict(append_blockers(tree(sql), relations)) == blocked


@pytest.mark.parametrize("sql", [
    "SELECT cid, count(*) AS n FROM orders GROUP BY cid",
    "SELECT count(*) AS n FROM orders",
    "SELECT cid, count(*) AS n FROM orders GROUP BY cid HAVING count(*) > 1",
    "SELECT cid, count(*) AS n FROM (SELECT * FROM orders WHERE amount > 0) GROUP BY cid",
])
def test_a_root_aggregation_blocks_only_without_root_aggregate(sql: str) -> None:
    assert dict(append_blockers(tree(sql), ["orders"])) == {"orders": INNER_AGG}
    assert dict(append_blockers(tree(sql), ["orders"], root_aggregate=True)) == {}


def test_root_aggregate_allows_only_the_outermost_aggregation() -> None:
    nested = tree("SELECT max(n) AS top FROM (SELECT cid, count(*) AS n FROM orders GROUP BY cid)")
    assert dict(append_blockers(nested, ["orders"], root_aggregate=True)) == {"orders": INNER_AGG}
    left = tree("SELECT c.tier, count(*) AS n FROM orders o LEFT JOIN customers c ON o.cid = c.id GROUP BY c.tier")
    assert dict(append_blockers(left, OC, root_aggregate=True)) == {"customers": "the right side of a LEFT JOIN"}


def test_aggregates_at() -> None:
    assert aggregates_at(tree("SELECT k FROM t GROUP BY k"))
    assert aggregates_at(tree("SELECT count(*) + 1 AS n FROM t"))
    assert not aggregates_at(tree("SELECT k, sum(x) OVER (PARTITION BY k) AS s FROM t"))
    assert not aggregates_at(tree("SELECT k FROM (SELECT k, count(*) AS n FROM t GROUP BY k)"))
    assert not aggregates_at(tree("SELECT k, (SELECT max(x) FROM u) AS m FROM t"))


# --- rename_tables ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sql", "mapping", "renamed"), [
    ("SELECT orders.id, orders.amount FROM orders WHERE orders.amount > 0", {"orders": "orders__delta_m"},
     "SELECT orders.id, orders.amount FROM `orders__delta_m` AS `orders` WHERE orders.amount > 0"),
    ("SELECT o.id, c.tier FROM orders AS o JOIN customers c ON o.cid = c.id", {"orders": "d1"},
     "SELECT o.id, c.tier FROM `d1` AS o JOIN customers AS c ON o.cid = c.id"),
    ("SELECT id FROM db.orders", {"orders": "d1"}, "SELECT id FROM `d1` AS `orders`"),
    ("SELECT id FROM orders", {"customers": "d1"}, "SELECT id FROM orders"),
    ("WITH recent AS (SELECT * FROM orders WHERE amount > 0) SELECT recent.id FROM recent",
     {"orders": "d1", "recent": "d2"},
     "WITH recent AS (SELECT * FROM `d1` AS `orders` WHERE amount > 0) SELECT recent.id FROM recent"),
])
def test_rename_tables(sql: str, mapping: dict[str, str], renamed: str) -> None:
    before = tree(sql).sql(dialect="spark")
    assert rename_tables(tree(sql), mapping).sql(dialect="spark") == renamed
    assert tree(sql).sql(dialect="spark") == before  # a copy: the memoized parse is left as it was


# --- aggregate_state: accepted ------------------------------------------------------------------------------------

def test_peer_hourly_windows() -> None:
    state = split(HOURLY)
    assert state.keys == ("country", "window")
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "sum"), ("_streamt_a2", "sum"),
                             ("_streamt_a3", "sum")]  # count, sum, and avg as a sum and a count
    assert state.partial.sql(dialect="spark") == (
        "SELECT country AS `country`, WINDOW(ts, '1 hour') AS `window`, COUNT(*) AS `_streamt_a0`, "
        "SUM(amount) AS `_streamt_a1`, SUM(CAST(amount AS DOUBLE)) AS `_streamt_a2`, COUNT(amount) AS `_streamt_a3` "
        "FROM orders_clean GROUP BY country, WINDOW(ts, '1 hour')")
    names = ["country", "window_start", "window_end", "order_count", "total_amount", "avg_amount"]
    assert state.final_sql("st", names) == (
        "SELECT `country` AS `country`, window.start AS `window_start`, window.end AS `window_end`, "
        "`_streamt_a0` AS `order_count`, `_streamt_a1` AS `total_amount`, "
        "TRY_DIVIDE(`_streamt_a2`, `_streamt_a3`) AS `avg_amount` FROM `st`")


def test_peer_tier_revenue_with_a_distinct_count() -> None:
    state = split(TIERS)
    assert state.keys == ("tier",) and state.distinct == ("_streamt_d0",)  # the set: (tier, customer) pairs
    assert merges(state) == [("_streamt_a0", "sum")]
    assert [(t.name, t.kind) for t in state.tallies] == [("_streamt_t0", "count")]
    assert state.partial.sql(dialect="spark") == (
        "SELECT tier AS `tier`, customer_id AS `_streamt_d0`, SUM(amount) AS `_streamt_a0` FROM customer_orders "
        "GROUP BY tier, customer_id")
    # one state row per tier: the merged sum and the tally of the tier's distinct customers
    assert state.final_sql("st", ["tier", "revenue", "distinct_customers"]) == (
        "SELECT `tier` AS `tier`, `_streamt_a0` AS `revenue`, `_streamt_t0` AS `distinct_customers` FROM `st`")


def test_global_aggregates() -> None:
    state = split("SELECT count(*) AS n, sum(amount) AS total, min(ts) AS first_ts, max(ts) AS last_ts FROM orders")
    assert state.keys == ()
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "sum"), ("_streamt_a2", "min"),
                             ("_streamt_a3", "max")]
    assert state.partial.sql(dialect="spark") == (
        "SELECT COUNT(*) AS `_streamt_a0`, SUM(amount) AS `_streamt_a1`, MIN(ts) AS `_streamt_a2`, "
        "MAX(ts) AS `_streamt_a3` FROM orders")
    assert state.final_sql("s", ["n", "total", "first_ts", "last_ts"]) == (
        "SELECT `_streamt_a0` AS `n`, `_streamt_a1` AS `total`, `_streamt_a2` AS `first_ts`, "
        "`_streamt_a3` AS `last_ts` FROM `s`")


def test_global_aggregates_around_an_expression() -> None:
    state = split("SELECT sum(amount) / count(*) AS ratio, count(*) + 1 AS n1 FROM orders")
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "sum")]  # count(*) kept once
    assert state.final_sql("s", ["ratio", "n1"]) == (
        "SELECT `_streamt_a0` / `_streamt_a1` AS `ratio`, `_streamt_a1` + 1 AS `n1` FROM `s`")


def test_global_distinct_aggregates() -> None:
    state = split("SELECT count(DISTINCT cid) AS customers, count(*) AS n FROM orders")
    assert state.keys == () and state.distinct == ("_streamt_d0",)
    assert merges(state) == [("_streamt_a0", "sum")]
    assert state.partial.sql(dialect="spark") == (
        "SELECT cid AS `_streamt_d0`, COUNT(*) AS `_streamt_a0` FROM orders GROUP BY cid")
    assert state.final_sql("s", ["customers", "n"]) == (  # no input rows: a count of 0, not NULL
        "SELECT `_streamt_t0` AS `customers`, COALESCE(`_streamt_a0`, 0) AS `n` FROM `s`")
    many = split("SELECT count(DISTINCT cid) AS c, sum(DISTINCT cid) AS s, avg(DISTINCT cid) AS a FROM orders")
    assert many.keys == () and many.values == ()
    assert [(t.name, t.kind) for t in many.tallies] == [("_streamt_t0", "count"), ("_streamt_t1", "sum"),
                                                         ("_streamt_t2", "sum"), ("_streamt_t3", "count")]
    assert many.final_sql("s", ["c", "s", "a"]) == (
        "SELECT `_streamt_t0` AS `c`, `_streamt_t1` AS `s`, TRY_DIVIDE(`_streamt_t2`, `_streamt_t3`) AS `a` FROM `s`")


def test_count_distinct_over_two_columns() -> None:
    state = split("SELECT tier, count(DISTINCT cid, country) AS n FROM orders GROUP BY tier")
    assert state.keys == ("tier",) and state.distinct == ("_streamt_d0", "_streamt_d1")
    assert state.final_sql("s", ["tier", "n"]) == "SELECT `tier` AS `tier`, `_streamt_t0` AS `n` FROM `s`"


def test_group_by_ordinals() -> None:
    state = split("SELECT country, tier, count(*) AS n FROM orders GROUP BY 2, 1")
    assert state.keys == ("tier", "country")
    assert state.partial.sql(dialect="spark") == (
        "SELECT tier AS `tier`, country AS `country`, COUNT(*) AS `_streamt_a0` FROM orders GROUP BY tier, country")
    assert state.final_sql("s", ["country", "tier", "n"]) == (
        "SELECT `country` AS `country`, `tier` AS `tier`, `_streamt_a0` AS `n` FROM `s`")


def test_group_by_an_expression_reused_in_select() -> None:
    state = split("SELECT date_trunc('DAY', ts) AS day, count(*) AS n, max(amount) - min(amount) AS spread "
                  "FROM orders GROUP BY date_trunc('DAY', ts)")
    assert state.keys == ("_streamt_k0",)
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "max"), ("_streamt_a2", "min")]
    assert state.partial.sql(dialect="spark") == (
        "SELECT DATE_TRUNC('DAY', ts) AS `_streamt_k0`, COUNT(*) AS `_streamt_a0`, MAX(amount) AS `_streamt_a1`, "
        "MIN(amount) AS `_streamt_a2` FROM orders GROUP BY DATE_TRUNC('DAY', ts)")
    assert state.final_sql("s", ["day", "n", "spread"]) == (
        "SELECT `_streamt_k0` AS `day`, `_streamt_a0` AS `n`, `_streamt_a1` - `_streamt_a2` AS `spread` FROM `s`")


def test_qualified_group_column() -> None:
    state = split("SELECT o.country, count(*) AS n FROM orders o GROUP BY o.country")
    assert state.keys == ("country",)
    assert state.final_sql("s", ["country", "n"]) == "SELECT `country` AS `country`, `_streamt_a0` AS `n` FROM `s`"


def test_having_becomes_a_where_over_state_rows() -> None:
    state = split("SELECT country, count(*) AS n FROM orders GROUP BY country "
                  "HAVING country <> 'xx' AND sum(amount) > 100")
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "sum")]  # the HAVING-only sum is kept
    assert state.partial.args.get("having") is None
    assert state.final_sql("s", ["country", "n"]) == (
        "SELECT `country` AS `country`, `_streamt_a0` AS `n` FROM `s` WHERE `country` <> 'xx' AND `_streamt_a1` > 100")


def test_having_with_a_distinct_aggregate() -> None:
    state = split("SELECT country, count(DISTINCT cid) AS n FROM orders GROUP BY country HAVING count(*) > 1")
    assert state.keys == ("country",) and state.distinct == ("_streamt_d0",)
    assert state.final_sql("s", ["country", "n"]) == (
        "SELECT `country` AS `country`, `_streamt_t0` AS `n` FROM `s` WHERE `_streamt_a0` > 1")


def test_distinct_mixed_with_other_aggregates() -> None:
    state = split("SELECT country, count(DISTINCT cid) AS a, sum(DISTINCT cid) AS b, avg(amount) AS c, "
                  "min(DISTINCT amount) AS d FROM orders GROUP BY country")
    assert state.keys == ("country",) and state.distinct == ("_streamt_d0",)
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "sum"), ("_streamt_a2", "min")]
    assert state.final_sql("s", ["country", "a", "b", "c", "d"]) == (
        "SELECT `country` AS `country`, `_streamt_t0` AS `a`, `_streamt_t1` AS `b`, "
        "TRY_DIVIDE(`_streamt_a0`, `_streamt_a1`) AS `c`, `_streamt_a2` AS `d` FROM `s`")


def test_filter_clauses() -> None:
    state = split("SELECT country, count(*) FILTER (WHERE amount > 10) AS big, "
                  "sum(amount) FILTER (WHERE status = 'ok') AS ok_total, avg(amount) FILTER (WHERE amount > 0) AS a "
                  "FROM orders GROUP BY country")
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "sum"), ("_streamt_a2", "sum"),
                             ("_streamt_a3", "sum")]
    assert state.partial.sql(dialect="spark") == (
        "SELECT country AS `country`, COUNT(*) FILTER(WHERE amount > 10) AS `_streamt_a0`, "
        "SUM(amount) FILTER(WHERE status = 'ok') AS `_streamt_a1`, "
        "SUM(CAST(amount AS DOUBLE)) FILTER(WHERE amount > 0) AS `_streamt_a2`, "
        "COUNT(amount) FILTER(WHERE amount > 0) AS `_streamt_a3` FROM orders GROUP BY country")
    assert state.final_sql("s", ["country", "big", "ok_total", "a"]) == (
        "SELECT `country` AS `country`, `_streamt_a0` AS `big`, `_streamt_a1` AS `ok_total`, "
        "TRY_DIVIDE(`_streamt_a2`, `_streamt_a3`) AS `a` FROM `s`")


def test_count_if_and_boolean_aggregates() -> None:
    state = split("SELECT country, count_if(amount > 10) AS big, bool_and(paid) AS p1, every(paid) AS p2, "
                  "bool_or(paid) AS p3, some(paid) AS p4 FROM orders GROUP BY country")
    assert merges(state) == [("_streamt_a0", "sum"), ("_streamt_a1", "bool_and"), ("_streamt_a2", "bool_and"),
                             ("_streamt_a3", "bool_or"), ("_streamt_a4", "bool_or")]
    assert state.partial.sql(dialect="spark") == (
        "SELECT country AS `country`, COUNT_IF(amount > 10) AS `_streamt_a0`, BOOL_AND(paid) AS `_streamt_a1`, "
        "EVERY(paid) AS `_streamt_a2`, BOOL_OR(paid) AS `_streamt_a3`, SOME(paid) AS `_streamt_a4` "
        "FROM orders GROUP BY country")
    assert state.final_sql("s", ["country", "big", "p1", "p2", "p3", "p4"]) == (
        "SELECT `country` AS `country`, `_streamt_a0` AS `big`, `_streamt_a1` AS `p1`, `_streamt_a2` AS `p2`, "
        "`_streamt_a3` AS `p3`, `_streamt_a4` AS `p4` FROM `s`")


def test_min_max_and_a_repeated_aggregate() -> None:
    state = split("SELECT country, min(amount) AS lo, max(amount) AS hi, max(amount) AS hi2 FROM orders "
                  "GROUP BY country")
    assert merges(state) == [("_streamt_a0", "min"), ("_streamt_a1", "max")]
    assert state.final_sql("s", ["country", "lo", "hi", "hi2"]) == (
        "SELECT `country` AS `country`, `_streamt_a0` AS `lo`, `_streamt_a1` AS `hi`, `_streamt_a1` AS `hi2` FROM `s`")


def test_sliding_window_key() -> None:
    state = split("SELECT country, window.start AS ws, count(*) AS n FROM orders "
                  "GROUP BY country, window(ts, '1 hour', '15 minutes')")
    assert state.keys == ("country", "window")
    assert state.final_sql("s", ["country", "ws", "n"]) == (
        "SELECT `country` AS `country`, window.start AS `ws`, `_streamt_a0` AS `n` FROM `s`")


def test_final_sql_needs_one_name_per_column() -> None:
    with pytest.raises(ValueError):
        split(TIERS).final_sql("s", ["tier", "revenue"])


@pytest.mark.parametrize(("sql", "projection"), [
    (TIERS, ["tier", "_streamt_a0", "_streamt_t0"]),  # the model's rows are its state
    ("SELECT sum(x) AS s, tier FROM t GROUP BY tier", ["_streamt_a0", "tier"]),  # in any order
    ("SELECT upper(tier) AS t, count(*) AS n FROM t GROUP BY upper(tier)", ["_streamt_k0", "_streamt_a0"]),
    ("SELECT count(*) AS n, max(x) AS hi FROM t", ["_streamt_a0", "_streamt_a1"]),
    (HOURLY, None),  # an average of a sum and a count, a window's fields
    ("SELECT tier, count(*) AS n FROM t GROUP BY tier HAVING count(*) > 1", None),  # groups left out
    ("SELECT tier, sum(x) AS a, sum(x) AS b FROM t GROUP BY tier", None),  # one state column twice
    ("SELECT tier, sum(x) + 1 AS s FROM t GROUP BY tier", None),  # computed from it
    ("SELECT count(*) AS n, count(DISTINCT c) AS d FROM t", None),  # a global count NULL when no row: COALESCE
])
def test_a_state_is_the_models_rows_when_the_final_query_only_renames(sql: str, projection: list[str] | None) -> None:
    assert split(sql).projection() == projection


def test_aggregate_state_leaves_the_parsed_tree_alone() -> None:
    before = tree(HOURLY).sql(dialect="spark")
    split(HOURLY)
    assert tree(HOURLY).sql(dialect="spark") == before


# --- aggregate_state: rejected ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT country, percentile_approx(amount, 0.5) AS p FROM orders GROUP BY country",
     "aggregate percentile_approx() cannot be merged"),
    ("SELECT country, first(amount) AS f FROM orders GROUP BY country", "aggregate first() cannot be merged"),
    ("SELECT country, collect_list(amount) AS l FROM orders GROUP BY country",
     "aggregate collect_list() cannot be merged"),
    ("SELECT country, stddev(amount) AS s FROM orders GROUP BY country", "aggregate stddev() cannot be merged"),
    ("SELECT country, tier, count(*) AS n FROM orders GROUP BY GROUPING SETS ((country), (tier))",
     "GROUPING SETS, ROLLUP or CUBE"),
    ("SELECT country, tier, count(*) AS n FROM orders GROUP BY ROLLUP (country, tier)",
     "GROUPING SETS, ROLLUP or CUBE"),
    ("SELECT country, tier, count(*) AS n FROM orders GROUP BY CUBE (country, tier)",
     "GROUPING SETS, ROLLUP or CUBE"),
    ("SELECT country, tier, count(*) AS n FROM orders GROUP BY country, tier WITH ROLLUP",
     "GROUPING SETS, ROLLUP or CUBE"),
    ("SELECT cid, session_window.start AS s, count(*) AS n FROM orders GROUP BY cid, session_window(ts, '5 minutes')",
     "a session window (new rows can merge sessions)"),
    ("SELECT country, count(DISTINCT cid) AS a, count(DISTINCT tier) AS b FROM orders GROUP BY country",
     "DISTINCT aggregates over different columns"),
    ("SELECT country, count(DISTINCT cid) FILTER (WHERE amount > 0) AS a FROM orders GROUP BY country",
     "count(DISTINCT ...) with FILTER"),
    ("SELECT country, tier, count(*) AS n FROM orders GROUP BY country",
     "column tier is neither grouped nor aggregated"),
    ("SELECT country, count(*) AS n FROM orders GROUP BY country HAVING n > 1",
     "column n is neither grouped nor aggregated"),
    ("SELECT upper(country) AS c, count(*) AS n FROM orders GROUP BY c", "GROUP BY c, a name of the SELECT list"),
    ("SELECT country, count(*) AS n FROM orders GROUP BY 3", "GROUP BY 3 names no column"),
    ("SELECT country, count(*) AS n FROM orders GROUP BY country, country", "two grouping keys named country"),
    ("SELECT DISTINCT country, count(*) AS n FROM orders GROUP BY country", "SELECT DISTINCT over an aggregation"),
    ("SELECT country, count(*) AS n, rank() OVER (ORDER BY count(*) DESC) AS r FROM orders GROUP BY country",
     "a window function (OVER)"),
    ("SELECT country, count(*) AS n FROM orders GROUP BY country QUALIFY row_number() OVER (ORDER BY count(*)) = 1",
     "QUALIFY on top of the aggregation"),
    ("SELECT k, count(*) AS n FROM a GROUP BY k UNION ALL SELECT k, 1 FROM b",
     "a set operation at the top of the query"),
    ("SELECT id, amount FROM orders", "the query does not aggregate"),
])
def test_aggregate_state_rejections(sql: str, reason: str) -> None:
    assert aggregate_state(tree(sql)) == reason


# --- incremental_plan ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sql", "relations", "kind", "reason", "blockers"), [
    ("SELECT id, amount FROM orders WHERE amount > 0", ["orders"], "append", "", {}),
    ("SELECT o.id, c.tier FROM orders o LEFT JOIN customers c ON o.cid = c.id", OC, "append", "",
     {"customers": "the right side of a LEFT JOIN"}),
    ("SELECT id FROM orders ORDER BY id LIMIT 3", ["orders"], "append", "", {"orders": "LIMIT"}),
    ("SELECT id FROM orders UNION ALL SELECT id FROM customers", OC, "append", "",
     {"orders": SET_OP, "customers": SET_OP}),
    (HOURLY, ["orders_clean"], "aggregate", "", {}),
    (TIERS, ["customer_orders"], "aggregate", "", {}),
    ("SELECT c.tier, count(*) AS n FROM orders o LEFT JOIN customers c ON o.cid = c.id GROUP BY c.tier", OC,
     "aggregate", "", {"customers": "the right side of a LEFT JOIN"}),
    ("SELECT country, percentile_approx(amount, 0.5) AS p FROM orders GROUP BY country", ["orders"], "recompute",
     "aggregate percentile_approx() cannot be merged", {}),
    ("SELECT country, tier, count(*) AS n FROM orders GROUP BY ROLLUP (country, tier)", ["orders"], "recompute",
     "GROUPING SETS, ROLLUP or CUBE", {}),
    ("SELECT *, rand() AS r FROM orders", ["orders"], "volatile",
     "it calls rand(), whose value changes from run to run", {}),
    ("SELECT id, current_date() AS d FROM orders", ["orders"], "volatile",
     "it calls current_date(), whose value changes from run to run", {}),
    ("SELECT country, count(*) AS n, max(now()) AS at FROM orders GROUP BY country", ["orders"], "volatile",
     "it calls now(), whose value changes from run to run", {}),
])
def test_incremental_plan(sql: str, relations: list[str], kind: str, reason: str, blockers: dict[str, str]) -> None:
    plan = incremental_plan(sql, relations)
    assert (plan.kind, plan.reason, dict(plan.blockers)) == (kind, reason, blockers)
    assert (plan.state is not None) == (kind == "aggregate")


def test_an_unparsable_query_is_volatile() -> None:
    plan = incremental_plan("SELECT FROM WHERE", ["orders"])
    assert plan.kind == "volatile"
    assert plan.reason.startswith("its SQL could not be analyzed (Expected table name but got")


def test_delta_sql_reads_the_renamed_relations() -> None:
    plan = incremental_plan(TIERS, ["customer_orders"])
    assert plan.delta_sql({"customer_orders": "customer_orders__delta_tier_revenue"}) == (
        "SELECT tier AS `tier`, customer_id AS `_streamt_d0`, SUM(amount) AS `_streamt_a0` "
        "FROM `customer_orders__delta_tier_revenue` AS `customer_orders` GROUP BY tier, customer_id")
    assert plan.delta_sql({}) == (
        "SELECT tier AS `tier`, customer_id AS `_streamt_d0`, SUM(amount) AS `_streamt_a0` FROM customer_orders "
        "GROUP BY tier, customer_id")
    joined = incremental_plan("SELECT o.cid, count(*) AS n FROM orders o JOIN customers c ON o.cid = c.id "
                              "GROUP BY o.cid", OC)
    assert joined.delta_sql({"orders": "d_orders"}) == (
        "SELECT o.cid AS `cid`, COUNT(*) AS `_streamt_a0` FROM `d_orders` AS o JOIN customers AS c "
        "ON o.cid = c.id GROUP BY o.cid")


def test_delta_sql_of_a_plan_without_state() -> None:
    with pytest.raises(AssertionError):
        incremental_plan("SELECT id FROM orders", ["orders"]).delta_sql({})


@pytest.mark.parametrize(("module", "examples"), [(incremental, 3), (appends, 5)])
def test_doctests(module: object, examples: int) -> None:
    result = doctest.testmod(module, verbose=False)  # type: ignore[arg-type]
    assert result.failed == 0
    assert result.attempted >= examples  # the examples are found (an import line counts as one)


# --- cases found while reviewing the planner -------------------------------------------------------------------

@pytest.mark.parametrize("sql", ["SELECT every(paid) AS e FROM orders", "SELECT try_sum(amount) AS s FROM orders",
                                 "SELECT any(paid) AS a FROM orders", "SELECT mean(amount) AS m FROM orders"])
def test_aggregates_sqlglot_leaves_anonymous_are_aggregates(sql: str) -> None:
    assert incremental_plan(sql, ["orders"]).kind in ("aggregate", "recompute")


def test_any_is_merged_as_bool_or() -> None:
    plan = incremental_plan("SELECT k, any(paid) AS a FROM orders GROUP BY k", ["orders"])
    assert plan.kind == "aggregate" and plan.state is not None
    assert merges(plan.state) == [("_streamt_a0", "bool_or")]


def test_an_aggregated_derived_table_blocks_its_input() -> None:
    sql = "SELECT o.id, s.m FROM orders o JOIN (SELECT try_sum(amount) AS m FROM payments) s ON true"
    assert dict(append_blockers(tree(sql), ["orders", "payments"])) == {"payments": "an aggregation inside the query"}


def test_localtimestamp_is_volatile() -> None:
    assert volatile(tree("SELECT id, localtimestamp() AS t FROM orders")) == "localtimestamp"


@pytest.mark.parametrize("sql", ["SELECT country, count(*) AS n FROM orders GROUP BY country ORDER BY n DESC LIMIT 3",
                                 "SELECT country, count(*) AS n FROM orders GROUP BY country ORDER BY n"])
def test_aggregate_with_order_by_or_limit_is_recomputed(sql: str) -> None:
    assert isinstance(aggregate_state(tree(sql)), str)
    assert incremental_plan(sql, ["orders"]).kind == "recompute"


def test_cte_shadowing_its_relation_is_recomputed() -> None:
    sql = "WITH orders AS (SELECT * FROM orders) SELECT a.id, b.id AS p FROM orders a JOIN orders b ON a.p = b.id"
    plan = incremental_plan(sql, ["orders"])
    assert plan.kind == "recompute" and "CTE" in plan.reason


def test_group_by_a_column_aliased_as_itself() -> None:
    state = split("SELECT country AS country, count(*) AS n FROM orders GROUP BY country")
    assert state.keys == ("country",)


def test_a_model_reading_its_own_rows_is_rebuilt_every_time() -> None:
    sql = "SELECT * FROM src WHERE ts > (SELECT max(ts) FROM `m`)"
    assert incremental_plan(sql, ["src"]).kind == "append"
    plan = incremental_plan(sql, ["src"], itself="m")
    assert plan.kind == "volatile" and "its own previous rows" in plan.reason
