"""Which relations a query is certain to read row by row, whole.

A materializer may piggyback work on the scan of an input (counting it, finding its malformed
records) only when the query's own action reads every row of that input exactly once. Anything
that can stop a scan early rules the whole query out: ``LIMIT``/``OFFSET``/``FETCH``, ``TABLESAMPLE``
(its ``n ROWS`` form is a limit) and ``EXISTS`` (Spark may answer it from the first row). A relation
(or a CTE) named twice is ruled out as well: its scan may run twice. Joins are allowed; a join that Spark cuts
short at run time (one side empty) leaves the piggybacked work unfinished, which its caller detects.
"""

from __future__ import annotations

from collections import Counter

from sqlglot import exp

from .parse import parse_query

_STOPS_EARLY = (exp.Limit, exp.Offset, exp.Fetch, exp.TableSample, exp.Exists)


def whole_scans(sql: str) -> frozenset[str]:
    """Names (as written, unquoted) of the tables the query reads whole and once; empty when the
    query can stop early or cannot be parsed.

    >>> sorted(whole_scans("SELECT a FROM `orders` o JOIN customers c ON o.id = c.id WHERE a > 0"))
    ['customers', 'orders']
    >>> sorted(whole_scans("SELECT a FROM orders LIMIT 10"))
    []
    """
    tree = parse_query(sql).tree
    if tree is None or any(True for _ in tree.find_all(*_STOPS_EARLY)):
        return frozenset()
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    counts = Counter(t.name for t in tree.find_all(exp.Table) if t.name)
    if any(counts[name] > 1 for name in ctes):  # a CTE named twice may be computed twice
        return frozenset()
    return frozenset(name for name, n in counts.items() if n == 1 and name not in ctes)
