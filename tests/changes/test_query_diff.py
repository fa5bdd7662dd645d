"""Two versions of a query compared as trees: what a reviewer is told changed."""

from __future__ import annotations

from dagster_streamt.changes.query_diff import compare

BASE = "SELECT a, sum(b) AS total FROM `t` WHERE a > 1 GROUP BY a"


def test_layout_and_keyword_case_are_not_changes() -> None:
    assert compare(BASE, "select a,\n  SUM(b)   as total\nfrom `t`\nwhere a > 1\ngroup by a").same


def test_each_clause_is_named() -> None:
    added = compare(BASE, "SELECT a, sum(b) AS total, count(*) AS n FROM `t` WHERE a > 1 GROUP BY a")
    assert added.only_added and added.added == ("n",)
    assert compare(BASE, BASE.replace("`t`", "`u`")).clauses == ("FROM: `t` -> `u`",)
    assert compare(BASE, BASE.replace("a > 1", "a > 2")).clauses == ("filter: a > 1 -> a > 2",)
    joined = compare(BASE, BASE.replace("FROM `t`", "FROM `t` JOIN `u` ON `t`.a = `u`.a"))
    assert joined.clauses == ("joins: none -> JOIN `u` ON `t`.a = `u`.a",)
    assert "joins: none -> JOIN `u` ON `t`.a = `u`.a" in joined.state
    cte = compare("WITH x AS (SELECT a FROM `t`) SELECT a FROM x", "WITH x AS (SELECT a FROM `t` WHERE a > 0) "
                  "SELECT a FROM x")
    assert cte.clauses == ("WITH (CTEs): x AS (SELECT a FROM `t`) -> x AS (SELECT a FROM `t` WHERE a > 0)",)
    recomputed = compare(BASE, BASE.replace("sum(b)", "max(b)"))
    assert recomputed.changed_columns == ("total",) and not recomputed.only_added
    assert recomputed.state == ("aggregations: SUM(b) -> MAX(b)",)
    reordered = compare("SELECT a, b FROM `t`", "SELECT b, a FROM `t`")
    assert not reordered.same and not reordered.only_added and reordered.clauses == ()
    union = compare("SELECT a FROM `t` UNION ALL SELECT a FROM `u`", "SELECT a FROM `t` UNION ALL SELECT a FROM `v`")
    assert union.clauses == ("the query changed",)
