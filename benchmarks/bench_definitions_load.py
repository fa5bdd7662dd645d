"""Dagster definitions load for big projects, against Dagster's own floor, in one run.

Ours: ``build_definitions(project)`` with a warm cache (project cache + column-lineage cache), which
builds every AssetSpec (with column schema, column lineage, code version), the models multi-asset,
sources and exposures, then ``Definitions.validate_loadable``. Floor: the very same AssetSpecs,
already built, put in one multi-asset + Definitions + ``validate_loadable`` (no project parsing).

    python benchmarks/bench_definitions_load.py [--sizes 1000,10000] [--workdir DIR]
Target: ours / floor <= 1.5 (warm cache).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg

sys.path.insert(0, str(Path(__file__).parent))
from gen_project import generate

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions


def floor_definitions(specs: list[dg.AssetSpec], others: list[dg.AssetSpec]) -> dg.Definitions:
    @dg.multi_asset(name="floor_models", specs=specs, can_subset=True)
    def _models(context):  # type: ignore[no-untyped-def]
        yield from ()

    defs = dg.Definitions(assets=[_models, *others])
    dg.Definitions.validate_loadable(defs)
    return defs


def ours(root: Path) -> dg.Definitions:
    defs = build_definitions(root)
    dg.Definitions.validate_loadable(defs)
    return defs


def timed(fn, k: int) -> float:  # type: ignore[no-untyped-def]
    runs = []
    for _ in range(k):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="streamt-defs-"))
    print(f"{'models':>7}  {'cold (first load)':>18}  {'ours warm':>10}  {'dagster floor':>14}  {'ratio':>6}  target")
    ok = True
    for n in (int(x) for x in args.sizes.split(",")):
        root = work / f"n{n}"
        if not (root / "stream_project.yml").exists():
            generate(root, n)
        t0 = time.perf_counter()
        defs = ours(root)  # fills the project and column-lineage caches
        cold = time.perf_counter() - t0
        assert not load(root).errors
        graph = defs.resolve_asset_graph()
        models_def = next(a for a in defs.assets if isinstance(a, dg.AssetsDefinition))  # type: ignore[union-attr]
        specs = list(models_def.specs)
        others = [a for a in defs.assets if isinstance(a, dg.AssetSpec)]  # type: ignore[union-attr]
        assert len(specs) + len(others) == len(list(graph.get_all_asset_keys()))
        warm = timed(lambda r=root: ours(r), args.runs)
        floor = timed(lambda s=specs, o=others: floor_definitions(s, o), args.runs)
        ratio = warm / floor
        ok &= ratio <= 1.5
        print(f"{n:>7,}  {cold:>17.2f}s  {warm:>9.2f}s  {floor:>13.2f}s  {ratio:>5.2f}x  "
              f"{'PASS' if ratio <= 1.5 else 'MISS'} (<= 1.5x)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
