"""Benchmark static column lineage on a synthetic project (cold, in memory).

Usage: ``python benchmarks/bench_column_lineage.py [--sizes 1000 10000] [--no-clgraph]``

Generates N models of ~10 columns each (projections, joins, CTE + aggregates, windows, UNION ALL,
``SELECT *``) over N/10 sources, times :func:`analyze_columns` in a fresh interpreter per size (so
the figure includes importing sqlglot), and, when ``clgraph`` is installed, times clgraph's
``Pipeline`` on the same 1,000 queries for a ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLS = [f"c{i}" for i in range(1, 10)]


def _proj(up: str) -> str:
    return (
        f"SELECT t.k, t.c1, t.c2 + 1 AS c2, upper(t.c3) AS c3, CAST(t.c4 AS DOUBLE) AS c4, "
        f"CASE WHEN t.c5 > 0 THEN t.c5 ELSE 0 END AS c5, coalesce(t.c6, t.c7) AS c6, t.c7, "
        f"t.c8, t.c9 FROM `{up}` t WHERE t.c1 IS NOT NULL"
    )


def _join(a: str, b: str) -> str:
    return (
        f"SELECT a.k, a.c1, b.c2, a.c3 + b.c3 AS c3, a.c4, b.c5, concat(a.c6, b.c6) AS c6, a.c7, "
        f"b.c8, a.c9 FROM `{a}` a LEFT JOIN `{b}` b ON a.k = b.k WHERE b.c9 > 0"
    )


def _agg(up: str) -> str:
    return (
        f"WITH base AS (SELECT k, c1, c2, c3, c4, c5, c6, c7, c8, c9 FROM `{up}` WHERE c9 > 0), "
        f"ranked AS (SELECT *, c1 * 2 AS d FROM base) "
        f"SELECT k, SUM(c1) AS c1, COUNT(*) AS c2, MAX(c3) AS c3, AVG(d) AS c4, MIN(c5) AS c5, "
        f"COUNT(DISTINCT c6) AS c6, SUM(CASE WHEN c7 > 0 THEN c8 ELSE 0 END) AS c7, "
        f"MAX(c8) AS c8, first(c9) AS c9 FROM ranked GROUP BY k HAVING COUNT(*) > 1"
    )


def _window(up: str) -> str:
    return (
        f"SELECT k, c1, c2, c3, c4, c5, c6, c7, "
        f"SUM(c8) OVER (PARTITION BY k ORDER BY c1) AS c8, "
        f"row_number() OVER (PARTITION BY k ORDER BY c2 DESC) AS c9 FROM `{up}`"
    )


def _union(a: str, b: str) -> str:
    cols = ", ".join(["k", *COLS])
    return f"SELECT {cols} FROM `{a}` UNION ALL SELECT {cols} FROM (SELECT * FROM `{b}`) x"


def _star(up: str) -> str:
    return f"SELECT * FROM `{up}` WHERE c2 > 0 ORDER BY k"


def make_project(n: int, seed: int = 7) -> tuple[dict[str, str], list[str], dict[str, list[str]]]:
    """N models over N/10 sources; every model refers only to earlier models or sources."""
    rng = random.Random(seed)
    sources = {f"src_{i}": ["k", *COLS] for i in range(max(1, n // 10))}
    names: list[str] = []
    models: dict[str, str] = {}
    for i in range(n):
        pool = names[-200:] + list(sources)
        a, b = rng.choice(pool), rng.choice(pool)
        kind = i % 6
        sql = [_proj, _join, _agg, _window, _union, _star][kind]
        models[f"m_{i}"] = sql(a, b) if kind in (1, 4) else sql(a)  # type: ignore[operator]
        names.append(f"m_{i}")
    return models, names, sources


def run_ours(n: int) -> dict[str, float]:
    """Time analyze_columns in this (fresh) interpreter, import included."""
    models, order, sources = make_project(n)
    t0 = time.perf_counter()
    from dagster_streamt.lineage.columns import analyze_columns

    t1 = time.perf_counter()
    result = analyze_columns(models, order, sources)
    t2 = time.perf_counter()
    hits = result.upstream(order[-1], "c1")
    t3 = time.perf_counter()
    down = result.downstream("src_0", "c1")
    t4 = time.perf_counter()
    from dagster_streamt.sql import parse_query

    parse_query.cache_clear()  # parses are memoized per process: time real parses, not cache hits
    for sql in models.values():
        parse_query(sql)
    t5 = time.perf_counter()
    edges = sum(len(e) for m in result.models.values() for e in m.fields.values())
    return {
        "models": n,
        "import_s": t1 - t0,
        "analyze_s": t2 - t1,
        "ms_per_model": (t2 - t1) * 1000 / n,
        "columns": sum(len(m.columns) for m in result.models.values()),
        "field_edges": edges,
        "warnings": len(result.warnings()),
        "upstream_walk_ms": (t3 - t2) * 1000,
        "upstream_hits": len(hits),
        "downstream_ms": (t4 - t3) * 1000,
        "downstream_hits": len(down),
        "parse_only_s": t5 - t4,
    }


def run_clgraph(n: int) -> dict[str, float] | str:
    """Time clgraph's Pipeline on the same queries, or say why it was skipped."""
    try:
        from clgraph import Pipeline
    except Exception as exc:
        return f"skipped: clgraph not importable ({type(exc).__name__}: {exc})"
    models, _, _ = make_project(n)
    queries = {name: f"CREATE TABLE {name} AS {sql}" for name, sql in models.items()}
    t0 = time.perf_counter()
    try:
        pipeline = Pipeline.from_dict(queries, dialect="spark")
    except Exception as exc:
        return f"skipped: clgraph failed on the synthetic project ({type(exc).__name__}: {exc})"
    elapsed = time.perf_counter() - t0
    edges = len(getattr(pipeline.column_graph, "edges", []) or [])
    return {"models": n, "analyze_s": elapsed, "ms_per_model": elapsed * 1000 / n, "edges": edges}


def _child(kind: str, n: int) -> dict[str, float] | str:
    """Run one measurement in a fresh interpreter so every figure is cold."""
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        f"import bench_column_lineage as b; print(json.dumps(b.run_{kind}({n})))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--clgraph-size", type=int, default=1000)
    parser.add_argument("--no-clgraph", action="store_true")
    args = parser.parse_args()
    ours: dict[int, dict[str, float] | str] = {}
    for n in args.sizes:
        ours[n] = res = _child("ours", n)
        if isinstance(res, str):
            print(f"dagster_streamt N={n}: {res}")
            continue
        print(
            f"dagster_streamt N={n}: analyze {res['analyze_s']:.2f}s ({res['ms_per_model']:.2f} ms/model), "
            f"import {res['import_s']:.2f}s, {res['columns']} columns, {res['field_edges']} field edges, "
            f"{res['warnings']} warnings; sqlglot parse alone {res['parse_only_s']:.2f}s; "
            f"upstream walk {res['upstream_walk_ms']:.1f} ms ({res['upstream_hits']} hits), "
            f"downstream walk incl. index {res['downstream_ms']:.0f} ms ({res['downstream_hits']} hits)"
        )
    if args.no_clgraph:
        return
    n = args.clgraph_size
    other = _child("clgraph", n)
    if isinstance(other, str):
        print(f"clgraph N={n}: {other}")
        return
    print(
        f"clgraph N={n} (Pipeline.from_dict, same SQL as CREATE TABLE ... AS): "
        f"analyze {other['analyze_s']:.2f}s ({other['ms_per_model']:.2f} ms/model), "
        f"{other['edges']} edges"
    )
    mine = ours.get(n)
    if not isinstance(mine, dict):
        mine = _child("ours", n)
    if isinstance(mine, dict):
        print(f"ratio clgraph/dagster_streamt at N={n}: {other['analyze_s'] / mine['analyze_s']:.1f}x")


if __name__ == "__main__":
    main()
