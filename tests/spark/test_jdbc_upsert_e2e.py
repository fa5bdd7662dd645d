"""Issue 23's "done when", as a new user does it: a project folder with a JSON source, a model and a
``sink: {format: jdbc, mode: upsert}`` to PostgreSQL, ``streamt run`` twice with new input in between
and no setting changed; PostgreSQL then holds exactly the new values. (Before, with a project's Spark
Connect server, the second run failed and the exported table stayed stale.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.spark.sinks.jdbc_tx import transaction

from ..conftest import POSTGRES_JAR, StreamtHere
from .postgres import postgres_url, skip_without_postgres

skip_without_postgres()
__all__ = ["postgres_url"]  # the fixture

PROJECT = """\
project:
  name: shop
runtime:
  spark:
    conf:
      spark.jars: {jar}
sources:
  - name: orders_raw
    format: json
    path: data
    columns:
      - {{name: order_id, type: bigint}}
      - {{name: customer, type: string}}
      - {{name: amount, type: double}}
models:
  - name: customer_totals
    materialized: table
    sql: |
      SELECT customer, sum(amount) AS total, count(*) AS orders
      FROM {{{{ source("orders_raw") }}}}
      GROUP BY customer
  - name: totals_pg
    from: customer_totals
    sink:
      format: jdbc
      mode: upsert
      key: customer
      options:
        url: {url}
        dbtable: public.customer_totals
        user: postgres
        password: unused
        driver: org.postgresql.Driver
"""


def _orders(path: Path, orders: list[tuple[int, str, float]]) -> None:
    path.write_text("".join(json.dumps({"order_id": i, "customer": c, "amount": a}) + "\n" for i, c, a in orders))


def _totals(orders: list[tuple[int, str, float]]) -> list[tuple[str, float, int]]:
    out: dict[str, tuple[float, int]] = {}
    for _, customer, amount in orders:
        total, n = out.get(customer, (0.0, 0))
        out[customer] = (total + amount, n + 1)
    return sorted((c, t, n) for c, (t, n) in out.items())


def _table(url: str) -> list[tuple[Any, ...]]:
    options = {"url": url, "user": "postgres", "password": "unused"}
    with transaction(options, "test") as conn:
        return conn.rows("SELECT customer, total, orders FROM public.customer_totals ORDER BY customer")


@pytest.mark.slow
@pytest.mark.spark
def test_streamt_run_twice_upserts_the_new_values_into_postgres(tmp_path: Path, postgres_url: str,
                                                                 streamt_here: StreamtHere) -> None:
    root, home = tmp_path / "shop", tmp_path / "dagster_home"
    (root / "data").mkdir(parents=True)
    home.mkdir()
    (root / "stream_project.yml").write_text(PROJECT.format(jar=POSTGRES_JAR, url=postgres_url))
    first = [(1, "ann", 10.0), (2, "bob", 5.0), (3, "ann", 2.5)]
    _orders(root / "data" / "orders-1.json", first)
    ran = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert _table(postgres_url) == _totals(first)

    second = [(4, "bob", 7.0), (5, "cid", 1.0)]  # bob's total and count change, cid is new, ann stays
    _orders(root / "data" / "orders-2.json", second)
    ran = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert _table(postgres_url) == _totals(first + second) == [("ann", 12.5, 2), ("bob", 12.0, 2), ("cid", 1.0, 1)]
