"""The harness's cases: Flink SQL as streamt's guides, examples and tests teach it (windowed aggregations,
stream joins, CDC, IoT, finance), over the generated orders, customers and shipments of ``data.py``.

Each case is one model. ``closed`` names the column that says when a row is final on a stream (a window's
end, or its start plus the largest window size for CUMULATE): Spark appends a window once its watermark
passes it, Flink closes every window when its bounded input ends, so only the rows final on both (the
column at or before the source's watermark after the data) are compared. ``origin`` is where the SQL
comes from in streamt (conduktor/streamt, Apache-2.0).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True)
class Case:
    name: str
    sql: str
    origin: str
    closed: str | None = None  # column: compare rows whose value (+ grace) is at or before the watermark
    grace: timedelta = timedelta(0)
    source: str = "orders"  # whose watermark closes the windows


O, S, C = '{{ source("orders") }}', '{{ source("shipments") }}', '{{ source("customers") }}'  # noqa: E741
CLEAN = '{{ ref("orders_clean") }}'
BASE = {"orders_clean": f"SELECT order_id, customer_id, region, amount, qty, order_ts FROM {O} "
                        "WHERE amount > 0 AND status IS NOT NULL"}  # guide_windowed's orders_clean

CASES: tuple[Case, ...] = (
    # group windows and their _START/_END/_ROWTIME (docs: windowed aggregations; examples/payments)
    Case("tumble_group", f"""SELECT region, TUMBLE_START(order_ts, INTERVAL '15' MINUTE) AS window_start,
  TUMBLE_END(order_ts, INTERVAL '15' MINUTE) AS window_end, COUNT(*) AS orders, SUM(amount) AS revenue,
  MIN(amount) AS min_amount, MAX(amount) AS max_amount
FROM {O} GROUP BY region, TUMBLE(order_ts, INTERVAL '15' MINUTE)""", "examples/payments customer_balances",
         closed="window_end"),
    Case("tumble_group_rowtime", f"""SELECT TUMBLE_END(order_ts, INTERVAL '1' HOUR) AS window_end,
  TUMBLE_ROWTIME(order_ts, INTERVAL '1' HOUR) AS rowtime, SUM(qty) AS units
FROM {CLEAN} GROUP BY TUMBLE(order_ts, INTERVAL '1' HOUR)""", "guide windowed-aggregations hourly_order_stats",
         closed="window_end"),
    Case("hop_group", f"""SELECT region,
  HOP_START(order_ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE) AS window_start,
  HOP_END(order_ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE) AS window_end, COUNT(*) AS orders
FROM {O} GROUP BY region, HOP(order_ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE)""",
         "guide windowed-aggregations order_trends_15min", closed="window_end"),
    Case("session_group", f"""SELECT customer_id, SESSION_START(order_ts, INTERVAL '5' MINUTE) AS session_start,
  SESSION_END(order_ts, INTERVAL '5' MINUTE) AS session_end, COUNT(*) AS orders
FROM {O} WHERE customer_id IS NOT NULL GROUP BY customer_id, SESSION(order_ts, INTERVAL '5' MINUTE)""",
         "docs IoT sessions", closed="session_end"),
    # window table functions over a source() and over a ref()
    Case("tvf_tumble_source", f"""SELECT window_start, window_end, region, COUNT(*) AS orders, SUM(amount) AS revenue
FROM TABLE(TUMBLE(TABLE {O}, DESCRIPTOR(order_ts), INTERVAL '15' MINUTES))
GROUP BY window_start, window_end, region""", "docs windowing TUMBLE", closed="window_end"),
    Case("tvf_hop_source", f"""SELECT window_start, window_end, COUNT(*) AS orders, MAX(amount) AS biggest
FROM TABLE(HOP(TABLE {O}, DESCRIPTOR(order_ts), INTERVAL '5' MINUTES, INTERVAL '15' MINUTES))
GROUP BY window_start, window_end""", "docs windowing HOP", closed="window_end"),
    Case("tvf_cumulate_source", f"""SELECT window_start, window_end, SUM(amount) AS running_revenue, COUNT(*) AS orders
FROM TABLE(CUMULATE(TABLE {O}, DESCRIPTOR(order_ts), INTERVAL '10' MINUTES, INTERVAL '1' HOUR))
GROUP BY window_start, window_end""", "docs windowing CUMULATE", closed="window_start", grace=timedelta(hours=1)),
    Case("tvf_window_time", f"""SELECT window_start, window_time, region, COUNT(*) AS orders
FROM TABLE(TUMBLE(TABLE {O}, DESCRIPTOR(order_ts), INTERVAL '30' MINUTES))
GROUP BY window_start, window_end, window_time, region""", "docs windowing window_time",
         closed="window_start", grace=timedelta(minutes=30)),
    Case("tvf_tumble_ref", f"""SELECT window_start, window_end, region, COUNT(*) AS orders, SUM(amount) AS revenue
FROM TABLE(TUMBLE(TABLE {CLEAN}, DESCRIPTOR(order_ts), INTERVAL '1' HOUR))
GROUP BY window_start, window_end, region""", "guide windowed-aggregations (TVF form)", closed="window_end"),
    Case("tvf_hop_ref", f"""SELECT window_start, window_end, SUM(qty) AS units
FROM TABLE(HOP(TABLE {CLEAN}, DESCRIPTOR(order_ts), INTERVAL '15' MINUTES, INTERVAL '1' HOUR))
GROUP BY window_start, window_end""", "guide windowed-aggregations order_trends (TVF form)", closed="window_end"),
    Case("tvf_cumulate_ref", f"""SELECT window_start, window_end, region, SUM(amount) AS revenue_so_far
FROM TABLE(CUMULATE(TABLE {CLEAN}, DESCRIPTOR(order_ts), INTERVAL '15' MINUTES, INTERVAL '1' HOUR))
GROUP BY window_start, window_end, region""", "docs finance running totals", closed="window_start",
         grace=timedelta(hours=1)),
    # joins (guide stream-joins; docs e-commerce)
    Case("interval_join", f"""SELECT o.order_id, s.carrier, TIMESTAMPDIFF(MINUTE, o.order_ts, s.shipped_at) AS minutes
FROM {O} AS o JOIN {S} AS s ON o.order_id = s.order_id
  AND s.shipped_at BETWEEN o.order_ts AND o.order_ts + INTERVAL '1' HOUR""",
         "guide stream-joins order_payment_matched"),
    Case("interval_join_where", f"""SELECT s.shipment_id, o.region, s.weight_g
FROM {O} o, {S} s
WHERE o.order_id = s.order_id AND o.order_ts BETWEEN s.shipped_at - INTERVAL '30' MINUTE AND s.shipped_at""",
         "docs joins (WHERE form)"),
    Case("temporal_join", f"""SELECT o.order_id, o.customer_id, c.tier, c.email
FROM {O} AS o JOIN {C} FOR SYSTEM_TIME AS OF o.order_ts AS c ON o.customer_id = c.id""",
         "guide stream-joins orders_enriched"),
    Case("temporal_join_star", f"""SELECT o.order_id, c.*
FROM {O} AS o JOIN {C} FOR SYSTEM_TIME AS OF o.order_ts AS c ON o.customer_id = c.id""",
         "a temporal join's dimension columns by star: nothing added"),
    Case("temporal_left_join", f"""SELECT o.order_id, o.amount, c.name AS customer_name, c.tier AS customer_tier,
  CASE c.tier WHEN 'platinum' THEN 0.20 WHEN 'gold' THEN 0.15 WHEN 'silver' THEN 0.10 ELSE 0.0 END AS tier_discount
FROM {O} AS o LEFT JOIN {C} FOR SYSTEM_TIME AS OF o.order_ts AS c ON o.customer_id = c.id""",
         "guide stream-joins orders_enriched (as written)"),
    # INTERVAL forms and timestamp arithmetic
    Case("interval_forms", f"""SELECT order_id, order_ts + INTERVAL '90' SECOND AS plus_90s,
  order_ts - INTERVAL '2' HOUR AS minus_2h, order_ts + INTERVAL '1' DAY AS next_day,
  order_ts + INTERVAL '10' MINUTES AS plus_10m, order_ts - INTERVAL '0.5' SECOND AS minus_half_second
FROM {O} WHERE order_ts < TIMESTAMP '2026-03-02 10:00:00'""", "docs SQL reference: intervals"),
    Case("timestamp_arithmetic", f"""SELECT s.shipment_id, TIMESTAMPDIFF(SECOND, o.order_ts, s.shipped_at) AS seconds,
  TIMESTAMPDIFF(HOUR, o.order_ts, s.shipped_at + INTERVAL '3' HOUR) AS hours,
  TIMESTAMPADD(MINUTE, 5, o.order_ts) AS plus_5m, CAST(o.order_ts AS DATE) AS order_date
FROM {O} AS o JOIN {S} AS s ON o.order_id = s.order_id
  AND s.shipped_at BETWEEN o.order_ts AND o.order_ts + INTERVAL '2' HOUR""", "guide stream-joins minutes_to_payment"),
    Case("floor_ceil", f"""SELECT order_id, FLOOR(order_ts TO HOUR) AS hour_start,
  CEIL(order_ts TO MINUTE) AS next_minute,
  FLOOR(order_ts TO DAY) AS day_start, FLOOR(amount) AS whole_amount, CEIL(discount * 10) AS tenths
FROM {O}""", "docs IoT hourly buckets"),
    Case("cast_timestamp3", f"""SELECT order_id, CAST(order_ts AS TIMESTAMP(3)) AS ts3,
  CAST('2026-03-02 09:30:00' AS TIMESTAMP(3)) AS fixed, CAST(amount AS INT) AS amount_int,
  CAST(qty AS STRING) AS qty_text, CAST(amount AS DOUBLE) AS amount_double
FROM {O}""", "docs sources (CAST to the event-time type)"),
    # functions
    Case("string_functions", f"""SELECT order_id, UPPER(TRIM(product)) AS product, LOWER(region) AS region,
  CHAR_LENGTH(product) AS len, CONCAT(region, '-', TRIM(product)) AS label, SUBSTRING(TRIM(product), 1, 3) AS prefix,
  REPLACE(product, 'g', 'G') AS replaced, REGEXP_REPLACE(product, '[aeiou]', '*') AS masked,
  LPAD(CAST(qty AS STRING), 3, '0') AS padded, POSITION('g' IN product) AS g_at
FROM {O}""", "docs first pipeline orders_clean"),
    Case("date_functions", f"""SELECT order_id, DATE_FORMAT(order_ts, 'yyyy-MM-dd HH:mm') AS minute_text,
  EXTRACT(HOUR FROM order_ts) AS h, HOUR(order_ts) AS h2, MINUTE(order_ts) AS m, YEAR(order_ts) AS y,
  MONTH(order_ts) AS mo, DAYOFMONTH(order_ts) AS d, TO_TIMESTAMP('2026-03-02 09:30:00') AS parsed
FROM {O}""", "docs IoT / payments date handling"),
    Case("more_string_functions", f"""SELECT o.order_id, SPLIT_INDEX(email, '@', 1) AS domain,
  CONCAT_WS('|', status, region) AS joined, IF(qty > 4, 'big', 'small') AS size, INITCAP(TRIM(product)) AS pretty,
  LEFT(region, 1) AS r1, RIGHT(region, 1) AS r2, LOCATE('d', product) AS d_at, REVERSE(region) AS rev,
  REPEAT(region, 2) AS twice
FROM {O} AS o JOIN {C} FOR SYSTEM_TIME AS OF o.order_ts AS c ON o.customer_id = c.id""", "docs e-commerce enrichment"),
    Case("more_date_functions", f"""SELECT order_id, DATE_FORMAT(order_ts, 'HH:mm:ss') AS t,
  UNIX_TIMESTAMP(DATE_FORMAT(order_ts, 'yyyy-MM-dd HH:mm:ss')) AS unix, TO_DATE('2026-03-02') AS d,
  DAYOFWEEK(order_ts) AS dow, QUARTER(order_ts) AS q, WEEK(order_ts) AS w,
  DATE_FORMAT(TIMESTAMPADD(DAY, 1, order_ts), 'yyyy-MM-dd') AS tomorrow, CURRENT_DATE IS NOT NULL AS has_date
FROM {O}""", "docs IoT / payments date handling"),
    Case("numeric_functions", f"""SELECT order_id, ROUND(amount, 1) AS rounded, ABS(amount) AS absolute,
  MOD(qty, 3) AS m,
  POWER(qty, 2) AS squared, qty * amount AS line_total, amount * (1 - COALESCE(discount, 0)) AS net
FROM {O}""", "docs finance"),
    Case("null_functions", f"""SELECT order_id, COALESCE(status, 'unknown') AS status, IFNULL(discount, 0) AS discount,
  NULLIF(status, 'pending') AS not_pending, CASE WHEN customer_id IS NULL THEN 'anonymous' ELSE customer_id END AS who,
  status IS DISTINCT FROM 'shipped' AS not_shipped
FROM {O}""", "docs first pipeline (NULL handling)"),
    Case("collect", f"""SELECT region, COLLECT(DISTINCT status) AS statuses, COLLECT(qty) AS quantities
FROM {O} GROUP BY region""", "dagster_streamt/sql/flink.py COLLECT"),
    Case("proctime", f"""SELECT order_id, PROCTIME() IS NOT NULL AS has_proctime FROM {O} WHERE qty > 6""",
         "docs processing time"),
    # aggregates: NULLs, integer division, AVG of integers, DISTINCT
    Case("null_aggregates", f"""SELECT region, COUNT(*) AS n, COUNT(status) AS with_status,
  COUNT(discount) AS with_discount,
  SUM(discount) AS discount_sum, MIN(status) AS first_status, MAX(discount) AS max_discount,
  COUNT(DISTINCT status) AS statuses, COUNT(DISTINCT customer_id) AS customers
FROM {O} GROUP BY region""", "docs payments metrics"),
    Case("null_group_key", f"""SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS spent
FROM {O} GROUP BY customer_id""", "guide CDC customer_360"),
    Case("integer_division", f"""SELECT order_id, qty / 2 AS half, qty / 3 AS third, -qty / 2 AS negative_half,
  qty * 10 / 4 AS scaled, CAST(qty AS DOUBLE) / 2 AS real_half FROM {O}""", "guide CDC product_analytics"),
    Case("avg_int", f"""SELECT region, AVG(qty) AS avg_qty, SUM(qty) / COUNT(*) AS ratio,
  AVG(CAST(qty AS DOUBLE)) AS exact
FROM {O} GROUP BY region""", "docs ecommerce averages"),
    Case("select_distinct", f"SELECT DISTINCT region, status FROM {O}", "docs first pipeline"),
    Case("having", f"""SELECT customer_id, SUM(amount) AS spent, COUNT(*) AS orders FROM {O}
WHERE customer_id IS NOT NULL GROUP BY customer_id HAVING COUNT(*) > 25""", "guide CDC customer_360"),
    Case("cdc_versions", f"SELECT tier, COUNT(*) AS versions, MAX(updated_at) AS last_change FROM {C} GROUP BY tier",
         "guide CDC"),
    Case("union_all", f"""SELECT order_id AS id, order_ts AS ts, 'order' AS kind FROM {O}
UNION ALL SELECT shipment_id AS id, shipped_at AS ts, 'shipment' AS kind FROM {S}""", "docs ecommerce events"),
    # Flink's streaming patterns Spark's streaming engine refuses
    Case("dedup_first", f"""SELECT order_id, customer_id, amount, order_ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY order_ts ASC) AS rn FROM {O}
) WHERE rn = 1""", "docs deduplication (keep first)"),
    Case("dedup_last", f"""SELECT id, tier, email FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY updated_at DESC) AS rn FROM {C}
) WHERE rn = 1""", "guide CDC (latest version per key)"),
    Case("top_n", f"""SELECT region, order_id, amount FROM (
  SELECT region, order_id, amount, ROW_NUMBER() OVER (PARTITION BY region ORDER BY amount DESC) AS rk FROM {O}
) WHERE rk <= 3""", "docs top-N"),
    Case("over_rows", f"""SELECT order_id, SUM(amount) OVER (PARTITION BY region ORDER BY order_ts
  ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS last_three
FROM {O}""", "docs finance moving sums"),
    Case("lag", f"""SELECT order_id, customer_id, amount,
  LAG(amount) OVER (PARTITION BY customer_id ORDER BY order_ts) AS previous_amount
FROM {O} WHERE customer_id IS NOT NULL""", "docs IoT / finance (change from the previous event)"),
)
