"""Hand-checked Spark SQL corpus for static column lineage.

Each case is analyzed as model ``m`` in a project with these sources and one upstream model
``stg``; edges are written ``"relation.column TYPE SUBTYPE"``. ``warnings`` are exact strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SOURCES: dict[str, list[str]] = {
    "orders": ["order_id", "customer_id", "amount", "status", "ts", "items", "address"],
    "customers": ["id", "name", "tier", "country"],
    "payments": ["order_id", "amount", "method"],
    "events": [],  # declared without columns: schema unknown
}
STG_SQL = "SELECT order_id, customer_id, amount AS amt FROM `orders` WHERE status = 'ok'"


@dataclass(frozen=True)
class Case:
    id: str
    sql: str
    columns: list[str]
    fields: dict[str, set[str]]
    dataset: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)


D, IND = "DIRECT", "INDIRECT"


def ident(*refs: str) -> set[str]:
    return {f"{r} {D} IDENTITY" for r in refs}


def tr(*refs: str) -> set[str]:
    return {f"{r} {D} TRANSFORMATION" for r in refs}


def agg(*refs: str) -> set[str]:
    return {f"{r} {D} AGGREGATION" for r in refs}


def ind(subtype: str, *refs: str) -> set[str]:
    return {f"{r} {IND} {subtype}" for r in refs}


CASES: list[Case] = [
    Case("bare_column", "SELECT order_id FROM `orders`", ["order_id"], {"order_id": ident("orders.order_id")}),
    Case(
        "aliased_identity",
        "SELECT o.order_id AS id FROM `orders` o",
        ["id"],
        {"id": ident("orders.order_id")},
    ),
    Case(
        "arithmetic_and_cast",
        "SELECT amount * 2 AS a2, CAST(status AS STRING) AS s FROM `orders`",
        ["a2", "s"],
        {"a2": tr("orders.amount"), "s": tr("orders.status")},
    ),
    Case(
        "function_of_two_columns",
        "SELECT concat(c.name, '-', c.country) AS label FROM `customers` c",
        ["label"],
        {"label": tr("customers.name", "customers.country")},
    ),
    Case(
        "aggregate_group_by_count_star",
        "SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n FROM `orders` GROUP BY customer_id",
        ["customer_id", "total", "n"],
        {"customer_id": ident("orders.customer_id"), "total": agg("orders.amount"), "n": set()},
        ind("GROUP_BY", "orders.customer_id"),
    ),
    Case(
        "count_distinct_having",
        "SELECT status, COUNT(DISTINCT customer_id) AS buyers FROM `orders` GROUP BY status HAVING SUM(amount) > 100",
        ["status", "buyers"],
        {"status": ident("orders.status"), "buyers": agg("orders.customer_id")},
        ind("GROUP_BY", "orders.status") | ind("FILTER", "orders.amount"),
    ),
    Case(
        "where_filter",
        "SELECT order_id FROM `orders` WHERE status = 'paid' AND amount > 0",
        ["order_id"],
        {"order_id": ident("orders.order_id")},
        ind("FILTER", "orders.status", "orders.amount"),
    ),
    Case(
        "inner_join_on",
        "SELECT o.order_id, c.name FROM `orders` o JOIN `customers` c ON o.customer_id = c.id",
        ["order_id", "name"],
        {"order_id": ident("orders.order_id"), "name": ident("customers.name")},
        ind("JOIN", "orders.customer_id", "customers.id"),
    ),
    Case(
        "left_join_unqualified_unique_columns",
        "SELECT order_id, name, tier FROM `orders` o LEFT JOIN `customers` c ON o.customer_id = c.id",
        ["order_id", "name", "tier"],
        {
            "order_id": ident("orders.order_id"),
            "name": ident("customers.name"),
            "tier": ident("customers.tier"),
        },
        ind("JOIN", "orders.customer_id", "customers.id"),
    ),
    Case(
        "ambiguous_unqualified_column",
        "SELECT amount FROM `orders` o JOIN `payments` p ON o.order_id = p.order_id",
        ["amount"],
        {"amount": set()},
        ind("JOIN", "orders.order_id", "payments.order_id"),
        ["m: ambiguous column 'amount': present in o, p"],
    ),
    Case(
        "inner_join_using",
        "SELECT order_id, o.amount, p.method FROM `orders` o JOIN `payments` p USING (order_id)",
        ["order_id", "amount", "method"],
        {
            "order_id": ident("orders.order_id"),
            "amount": ident("orders.amount"),
            "method": ident("payments.method"),
        },
        ind("JOIN", "orders.order_id", "payments.order_id"),
    ),
    Case(
        "full_join_using_coalesces_key",
        "SELECT order_id FROM `orders` FULL OUTER JOIN `payments` USING (order_id)",
        ["order_id"],
        {"order_id": tr("orders.order_id", "payments.order_id")},
        ind("JOIN", "orders.order_id", "payments.order_id"),
    ),
    Case(
        "right_join_using_star_through_model",
        "SELECT * FROM `payments` p RIGHT JOIN `stg` s USING (order_id)",
        ["order_id", "amount", "method", "customer_id", "amt"],
        {
            "order_id": ident("stg.order_id"),
            "amount": ident("payments.amount"),
            "method": ident("payments.method"),
            "customer_id": ident("stg.customer_id"),
            "amt": ident("stg.amt"),
        },
        ind("JOIN", "payments.order_id", "stg.order_id"),
    ),
    Case(
        "cross_join",
        "SELECT o.order_id, c.name FROM `orders` o CROSS JOIN `customers` c",
        ["order_id", "name"],
        {"order_id": ident("orders.order_id"), "name": ident("customers.name")},
    ),
    Case(
        "chained_ctes",
        "WITH a AS (SELECT order_id, amount FROM `orders` WHERE status = 'paid'), "
        "b AS (SELECT order_id, amount * 1.1 AS gross FROM a) SELECT order_id, gross FROM b",
        ["order_id", "gross"],
        {"order_id": ident("orders.order_id"), "gross": tr("orders.amount")},
        ind("FILTER", "orders.status"),
    ),
    Case(
        "cte_aggregate_then_transform",
        "WITH t AS (SELECT customer_id, SUM(amount) AS total FROM `orders` GROUP BY customer_id) "
        "SELECT customer_id, total / 100 AS total_k FROM t WHERE total > 10",
        ["customer_id", "total_k"],
        {"customer_id": ident("orders.customer_id"), "total_k": agg("orders.amount")},
        ind("GROUP_BY", "orders.customer_id") | ind("FILTER", "orders.amount"),
    ),
    Case(
        "nested_subqueries",
        "SELECT x.cid, x.n FROM (SELECT customer_id AS cid, COUNT(*) AS n FROM "
        "(SELECT * FROM `orders` WHERE amount > 0) y GROUP BY customer_id) x",
        ["cid", "n"],
        {"cid": ident("orders.customer_id"), "n": set()},
        ind("FILTER", "orders.amount") | ind("GROUP_BY", "orders.customer_id"),
    ),
    Case(
        "window_sum_partition_order",
        "SELECT order_id, SUM(amount) OVER (PARTITION BY customer_id ORDER BY ts) AS running FROM `orders`",
        ["order_id", "running"],
        {
            "order_id": ident("orders.order_id"),
            "running": agg("orders.amount") | ind("WINDOW", "orders.customer_id", "orders.ts"),
        },
    ),
    Case(
        "dedup_row_number_filter_outside",
        "SELECT order_id, amount FROM (SELECT *, row_number() OVER (PARTITION BY order_id "
        "ORDER BY ts DESC) AS rn FROM `orders`) d WHERE rn = 1",
        ["order_id", "amount"],
        {"order_id": ident("orders.order_id"), "amount": ident("orders.amount")},
        ind("FILTER", "orders.order_id", "orders.ts"),
    ),
    Case(
        "lag_over_named_window",
        "SELECT order_id, lag(amount) OVER w AS prev_amount FROM `orders` "
        "WINDOW w AS (PARTITION BY customer_id ORDER BY ts)",
        ["order_id", "prev_amount"],
        {
            "order_id": ident("orders.order_id"),
            "prev_amount": tr("orders.amount") | ind("WINDOW", "orders.customer_id", "orders.ts"),
        },
    ),
    Case(
        "searched_case",
        "SELECT order_id, CASE WHEN status = 'paid' THEN amount WHEN status = 'refund' THEN -amount "
        "ELSE 0 END AS signed FROM `orders`",
        ["order_id", "signed"],
        {
            "order_id": ident("orders.order_id"),
            "signed": tr("orders.amount") | ind("CONDITIONAL", "orders.status"),
        },
    ),
    Case(
        "simple_case_operand",
        "SELECT CASE tier WHEN 'gold' THEN name ELSE 'n/a' END AS vip FROM `customers`",
        ["vip"],
        {"vip": tr("customers.name") | ind("CONDITIONAL", "customers.tier")},
    ),
    Case(
        "sum_of_if",
        "SELECT customer_id, SUM(IF(status = 'paid', amount, 0)) AS paid FROM `orders` GROUP BY customer_id",
        ["customer_id", "paid"],
        {
            "customer_id": ident("orders.customer_id"),
            "paid": agg("orders.amount") | ind("CONDITIONAL", "orders.status"),
        },
        ind("GROUP_BY", "orders.customer_id"),
    ),
    Case(
        "aggregate_filter_clause",
        "SELECT COUNT(*) FILTER (WHERE status = 'paid') AS n_paid, SUM(amount) AS total FROM `orders`",
        ["n_paid", "total"],
        {"n_paid": ind("FILTER", "orders.status"), "total": agg("orders.amount")},
    ),
    Case(
        "union_all_top_level",
        "SELECT order_id, amount FROM `orders` UNION ALL SELECT order_id, amount FROM `payments`",
        ["order_id", "amount"],
        {
            "order_id": ident("orders.order_id", "payments.order_id"),
            "amount": ident("orders.amount", "payments.amount"),
        },
    ),
    Case(
        "union_three_branches_by_position",
        "SELECT id AS key, name AS label FROM `customers` UNION SELECT order_id, status FROM `orders` "
        "UNION SELECT order_id, method FROM `payments`",
        ["key", "label"],
        {
            "key": ident("customers.id", "orders.order_id", "payments.order_id"),
            "label": ident("customers.name", "orders.status", "payments.method"),
        },
    ),
    Case(
        "union_in_subquery_then_group",
        "SELECT src_id, COUNT(*) AS n FROM (SELECT customer_id AS src_id FROM `orders` WHERE amount > 0 "
        "UNION ALL SELECT id FROM `customers`) u GROUP BY src_id",
        ["src_id", "n"],
        {"src_id": ident("orders.customer_id", "customers.id"), "n": set()},
        ind("FILTER", "orders.amount") | ind("GROUP_BY", "orders.customer_id", "customers.id"),
    ),
    Case(
        "union_branch_width_mismatch",
        "SELECT order_id, amount FROM `orders` UNION ALL SELECT order_id FROM `payments`",
        ["order_id", "amount"],
        {"order_id": ident("orders.order_id", "payments.order_id"), "amount": ident("orders.amount")},
        warnings=["m: UNION branch 2 has 1 columns, branch 1 has 2"],
    ),
    Case(
        "struct_field_access",
        "SELECT o.address.city AS city, address.zip FROM `orders` o",
        ["city", "zip"],
        {"city": tr("orders.address"), "zip": tr("orders.address")},
    ),
    Case(
        "deep_struct_field_unaliased",
        "SELECT o.address.geo.lat FROM `orders` o",
        ["lat"],
        {"lat": tr("orders.address")},
    ),
    Case(
        "lateral_view_explode",
        "SELECT o.order_id, item FROM `orders` o LATERAL VIEW explode(o.items) t AS item",
        ["order_id", "item"],
        {"order_id": ident("orders.order_id"), "item": tr("orders.items")},
    ),
    Case(
        "lateral_view_outer_posexplode_struct",
        "SELECT order_id, t.pos, t.it.sku AS sku FROM `orders` LATERAL VIEW OUTER posexplode(items) t AS pos, it",
        ["order_id", "pos", "sku"],
        {"order_id": ident("orders.order_id"), "pos": tr("orders.items"), "sku": tr("orders.items")},
    ),
    Case(
        "explode_in_select",
        "SELECT order_id, explode(items) AS item FROM `orders`",
        ["order_id", "item"],
        {"order_id": ident("orders.order_id"), "item": tr("orders.items")},
    ),
    Case(
        "group_by_spark_window_fields",
        "SELECT window.start AS window_start, window.end AS window_end, COUNT(*) AS n FROM `orders` "
        "GROUP BY window(ts, '1 hour')",
        ["window_start", "window_end", "n"],
        {"window_start": tr("orders.ts"), "window_end": tr("orders.ts"), "n": set()},
        ind("GROUP_BY", "orders.ts"),
    ),
    Case(
        "spark_window_selected_unaliased",
        "SELECT window(ts, '10 minutes'), status, SUM(amount) AS total FROM `orders` "
        "GROUP BY window(ts, '10 minutes'), status",
        ["window", "status", "total"],
        {"window": tr("orders.ts"), "status": ident("orders.status"), "total": agg("orders.amount")},
        ind("GROUP_BY", "orders.ts", "orders.status"),
    ),
    Case(
        "session_window",
        "SELECT session_window(ts, '5 minutes') AS session, customer_id, COUNT(*) AS clicks FROM `orders` "
        "GROUP BY session_window(ts, '5 minutes'), customer_id",
        ["session", "customer_id", "clicks"],
        {"session": tr("orders.ts"), "customer_id": ident("orders.customer_id"), "clicks": set()},
        ind("GROUP_BY", "orders.ts", "orders.customer_id"),
    ),
    Case(
        "bare_window_column_and_through_subquery",
        "SELECT w.window.start AS s, w.n, w.window FROM (SELECT window, COUNT(*) AS n FROM `orders` "
        "GROUP BY window(ts, '1 hour')) w",
        ["s", "n", "window"],
        {"s": tr("orders.ts"), "n": set(), "window": tr("orders.ts")},
        ind("GROUP_BY", "orders.ts"),
    ),
    Case(
        "window_start_over_unknown_schema",
        "SELECT window.start AS ws, COUNT(*) AS n FROM `events` GROUP BY window(event_ts, '1 minute')",
        ["ws", "n"],
        {"ws": tr("events.event_ts"), "n": set()},
        ind("GROUP_BY", "events.event_ts"),
    ),
    Case(
        "select_star_source",
        "SELECT * FROM `customers`",
        ["id", "name", "tier", "country"],
        {c: ident(f"customers.{c}") for c in ["id", "name", "tier", "country"]},
    ),
    Case(
        "select_star_model",
        "SELECT * FROM `stg`",
        ["order_id", "customer_id", "amt"],
        {c: ident(f"stg.{c}") for c in ["order_id", "customer_id", "amt"]},
    ),
    Case(
        "qualified_star_with_join",
        "SELECT c.*, o.amount FROM `orders` o JOIN `customers` c ON o.customer_id = c.id",
        ["id", "name", "tier", "country", "amount"],
        {**{c: ident(f"customers.{c}") for c in ["id", "name", "tier", "country"]}, "amount": ident("orders.amount")},
        ind("JOIN", "orders.customer_id", "customers.id"),
    ),
    Case(
        "star_over_join_duplicate_names",
        "SELECT * FROM `stg` s JOIN `payments` p ON s.order_id = p.order_id",
        ["order_id", "customer_id", "amt", "amount", "method"],
        {
            "order_id": ident("stg.order_id", "payments.order_id"),
            "customer_id": ident("stg.customer_id"),
            "amt": ident("stg.amt"),
            "amount": ident("payments.amount"),
            "method": ident("payments.method"),
        },
        ind("JOIN", "stg.order_id", "payments.order_id"),
        ["m: duplicate output column 'order_id': lineage of both is merged"],
    ),
    Case(
        "unknown_schema_single_relation",
        "SELECT user_id, upper(event_type) AS et FROM `events`",
        ["user_id", "et"],
        {"user_id": ident("events.user_id"), "et": tr("events.event_type")},
    ),
    Case(
        "unknown_schema_qualified_in_join",
        "SELECT e.user_id, c.name FROM `events` e JOIN `customers` c ON e.user_id = c.id",
        ["user_id", "name"],
        {"user_id": ident("events.user_id"), "name": ident("customers.name")},
        ind("JOIN", "events.user_id", "customers.id"),
    ),
    Case(
        "unknown_schema_unqualified_in_join",
        "SELECT user_id, name FROM `events` e JOIN `customers` c ON e.user_id = c.id",
        ["user_id", "name"],
        {"user_id": ident("events.user_id"), "name": ident("customers.name")},
        ind("JOIN", "events.user_id", "customers.id"),
        ["m: column 'user_id' attributed to 'e', the only relation in scope whose columns are unknown"],
    ),
    Case(
        "two_unknown_schemas_unqualified",
        "SELECT a.k, v FROM `events` a JOIN `not_declared` b ON a.k = b.k",
        ["k", "v"],
        {"k": ident("events.k"), "v": set()},
        ind("JOIN", "events.k", "not_declared.k"),
        [
            "m: relation 'not_declared' is not a model or source: its columns are unknown",
            "m: cannot attribute column 'v': it may come from any of a, b (unknown schemas)",
        ],
    ),
    Case(
        "star_over_unknown_schema",
        "SELECT * FROM `events`",
        [],
        {},
        warnings=[
            "m: output columns are not fully known (SELECT * over a relation with unknown columns); "
            "declare the model's columns to fix"
        ],
    ),
    Case(
        "qualified_column_missing_from_known_schema",
        "SELECT c.email FROM `customers` c",
        ["email"],
        {"email": ident("customers.email")},
        warnings=["m: column 'c.email' not found: 'customers' has no such column"],
    ),
    Case(
        "unqualified_column_not_found",
        "SELECT nope, id FROM `customers`",
        ["nope", "id"],
        {"nope": set(), "id": ident("customers.id")},
        warnings=["m: column 'nope' not found in customers"],
    ),
    Case(
        "unknown_relation",
        "SELECT x FROM `not_a_model`",
        ["x"],
        {"x": ident("not_a_model.x")},
        warnings=["m: relation 'not_a_model' is not a model or source: its columns are unknown"],
    ),
    Case(
        "correlated_exists",
        "SELECT c.id FROM `customers` c WHERE EXISTS (SELECT 1 FROM `orders` o "
        "WHERE o.customer_id = c.id AND o.amount > 100)",
        ["id"],
        {"id": ident("customers.id")},
        ind("FILTER", "orders.customer_id", "customers.id", "orders.amount"),
    ),
    Case(
        "in_subquery",
        "SELECT name FROM `customers` WHERE id IN (SELECT customer_id FROM `orders` WHERE status = 'paid')",
        ["name"],
        {"name": ident("customers.name")},
        ind("FILTER", "customers.id", "orders.customer_id", "orders.status"),
    ),
    Case(
        "scalar_subquery_in_select",
        "SELECT order_id, amount / (SELECT SUM(amount) FROM `payments`) AS share FROM `orders`",
        ["order_id", "share"],
        {"order_id": ident("orders.order_id"), "share": tr("orders.amount") | agg("payments.amount")},
    ),
    Case(
        "group_by_ordinal_order_by_alias",
        "SELECT customer_id AS cid, SUM(amount) AS total FROM `orders` GROUP BY 1 ORDER BY total DESC",
        ["cid", "total"],
        {"cid": ident("orders.customer_id"), "total": agg("orders.amount")},
        ind("GROUP_BY", "orders.customer_id") | ind("SORT", "orders.amount"),
    ),
    Case(
        "lateral_column_alias",
        "SELECT amount * 2 AS double_amt, double_amt + 1 AS plus_one FROM `orders`",
        ["double_amt", "plus_one"],
        {"double_amt": tr("orders.amount"), "plus_one": tr("orders.amount")},
    ),
    Case(
        "higher_order_function_lambda",
        "SELECT order_id, transform(items, x -> x * amount) AS scaled FROM `orders`",
        ["order_id", "scaled"],
        {"order_id": ident("orders.order_id"), "scaled": tr("orders.items", "orders.amount")},
    ),
    Case(
        "unaliased_expression_warns",
        "SELECT upper(name) FROM `customers`",
        ["UPPER(name)"],
        {"UPPER(name)": tr("customers.name")},
        warnings=["m: unaliased expression 'UPPER(name)': output column name approximated; add an alias"],
    ),
    Case(
        "except_right_side_filters",
        "SELECT customer_id FROM `orders` EXCEPT SELECT id FROM `customers` WHERE tier = 'banned'",
        ["customer_id"],
        {"customer_id": ident("orders.customer_id")},
        ind("FILTER", "customers.id", "customers.tier"),
    ),
    Case(
        "case_insensitive_names",
        "SELECT ORDER_ID, O.Amount FROM `orders` o",
        ["ORDER_ID", "Amount"],
        {"ORDER_ID": ident("orders.order_id"), "Amount": ident("orders.amount")},
    ),
    Case(
        "group_by_rollup",
        "SELECT status, customer_id, SUM(amount) AS s FROM `orders` GROUP BY ROLLUP(status, customer_id)",
        ["status", "customer_id", "s"],
        {
            "status": ident("orders.status"),
            "customer_id": ident("orders.customer_id"),
            "s": agg("orders.amount"),
        },
        ind("GROUP_BY", "orders.status", "orders.customer_id"),
    ),
    Case(
        "distinct_sort_by",
        "SELECT DISTINCT status FROM `orders` SORT BY status",
        ["status"],
        {"status": ident("orders.status")},
        ind("SORT", "orders.status"),
    ),
    Case(
        "cte_shadows_model_name",
        "WITH stg AS (SELECT id AS order_id FROM `customers`) SELECT order_id FROM stg",
        ["order_id"],
        {"order_id": ident("customers.id")},
    ),
    Case(
        "values_relation_in_join",
        "SELECT v.a, o.amount FROM `orders` o JOIN (VALUES (1, 'x')) AS v(a, b) ON o.order_id = v.a",
        ["a", "amount"],
        {"a": set(), "amount": ident("orders.amount")},
        ind("JOIN", "orders.order_id"),
    ),
    Case(
        "window_frame_expression_partition",
        "SELECT order_id, AVG(amount) OVER (PARTITION BY date_trunc('day', ts), status ORDER BY amount "
        "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS ma FROM `orders`",
        ["order_id", "ma"],
        {
            "order_id": ident("orders.order_id"),
            "ma": agg("orders.amount") | ind("WINDOW", "orders.amount", "orders.ts", "orders.status"),
        },
    ),
    Case(
        "cte_inside_subquery",
        "SELECT s.name FROM (WITH x AS (SELECT id, name FROM `customers`) SELECT name FROM x) s",
        ["name"],
        {"name": ident("customers.name")},
    ),
    Case(
        "relation_name_as_qualifier",
        "SELECT `orders`.amount FROM `orders`",
        ["amount"],
        {"amount": ident("orders.amount")},
    ),
    Case(
        "case_in_window_and_coalesce_over_join",
        "SELECT coalesce(p.method, 'none') AS method, "
        "MAX(CASE WHEN o.status = 'paid' THEN o.amount END) OVER (PARTITION BY o.customer_id) AS top_paid "
        "FROM `orders` o LEFT JOIN `payments` p ON o.order_id = p.order_id",
        ["method", "top_paid"],
        {
            "method": tr("payments.method"),
            "top_paid": agg("orders.amount")
            | ind("CONDITIONAL", "orders.status")
            | ind("WINDOW", "orders.customer_id"),
        },
        ind("JOIN", "orders.order_id", "payments.order_id"),
    ),
    Case(
        "recursive_cte_self_reference_is_opaque",
        "WITH RECURSIVE r AS (SELECT order_id AS n FROM `orders` UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
        ["n"],
        {"n": ident("orders.order_id")},
    ),
    Case(
        "exists_in_select_and_not_in_filter",
        "SELECT c.id, EXISTS (SELECT 1 FROM `payments` p WHERE p.order_id = c.id) AS has_paid FROM `customers` c "
        "WHERE c.tier NOT IN (SELECT status FROM `orders`)",
        ["id", "has_paid"],
        {"id": ident("customers.id"), "has_paid": ind("FILTER", "payments.order_id", "customers.id")},
        ind("FILTER", "customers.tier", "orders.status"),
    ),
    Case(
        "natural_join_keys_from_schemas",
        "SELECT * FROM `payments` NATURAL LEFT JOIN `stg`",
        ["order_id", "amount", "method", "customer_id", "amt"],
        {
            "order_id": ident("payments.order_id"),
            "amount": ident("payments.amount"),
            "method": ident("payments.method"),
            "customer_id": ident("stg.customer_id"),
            "amt": ident("stg.amt"),
        },
        ind("JOIN", "payments.order_id", "stg.order_id"),
    ),
    Case(
        "semi_and_anti_join_with_hint",
        "SELECT /*+ BROADCAST(c) */ o.order_id FROM `orders` o LEFT SEMI JOIN `customers` c ON o.customer_id = c.id "
        "LEFT ANTI JOIN `payments` p ON o.order_id = p.order_id",
        ["order_id"],
        {"order_id": ident("orders.order_id")},
        ind("JOIN", "orders.customer_id", "customers.id", "orders.order_id", "payments.order_id"),
    ),
    Case(
        "named_window_extended_in_over",
        "SELECT SUM(amount) OVER (w ORDER BY ts) AS x FROM `orders` WINDOW w AS (PARTITION BY customer_id)",
        ["x"],
        {"x": agg("orders.amount") | ind("WINDOW", "orders.customer_id", "orders.ts")},
    ),
]
