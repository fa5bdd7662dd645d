"""Column lineage of a generated project through the product path (``column_lineage(loaded)``):
cold (analysis, cache written) versus cached (cache read), in one run.

    python benchmarks/bench_column_lineage_project.py [--sizes 1000,10000] [--workdir DIR]
Targets at 10,000 models: cold under 60 s, cached under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gen_project import generate

from dagster_streamt.api import load
from dagster_streamt.lineage.project_columns import CACHE_FILE, column_lineage


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="streamt-cols-"))
    print(f"{'models':>7}  {'columns':>8}  {'cold':>8}  {'cached':>8}  {'ratio':>6}  targets")
    for n in (int(x) for x in args.sizes.split(",")):
        root = work / f"n{n}"
        if not (root / "stream_project.yml").exists():
            generate(root, n)
        loaded = load(root)
        (root / CACHE_FILE).unlink(missing_ok=True)
        t = time.perf_counter()
        result = column_lineage(loaded)
        cold = time.perf_counter() - t
        runs = []
        for _ in range(5):
            t = time.perf_counter()
            column_lineage(loaded)
            runs.append(time.perf_counter() - t)
        cached = statistics.median(runs)
        cols = sum(len(m.columns) for m in result.models.values())
        ok = "PASS" if (n < 10000 or (cold < 60 and cached < 2)) else "MISS"
        print(f"{n:>7,}  {cols:>8,}  {cold:>7.2f}s  {cached:>7.2f}s  {cold / cached:>5.0f}x  {ok} "
              "(10k: cold < 60 s, cached < 2 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
