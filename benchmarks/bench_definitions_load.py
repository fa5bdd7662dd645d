"""Dagster definitions load for big projects, against Dagster's own floor, in one run.

Ours: ``build_definitions(project)`` with a warm cache (project cache + column-lineage cache), which
builds every AssetSpec (with column schema, column lineage, code version), the models multi-asset
with its asset checks, sources and exposures, then ``Definitions.validate_loadable``.
Floor: Dagster's own cost for the same definitions with no project parsing at all: the same
AssetSpecs and check specs constructed from plain Python data held in memory (keys, deps, text,
metadata as lists), put in one multi-asset, with the same schedules (asset jobs over the same
selections), + Definitions + ``validate_loadable``.

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
from typing import Any

import dagster as dg

sys.path.insert(0, str(Path(__file__).parent))
from gen_project import generate

from dagster_streamt.api import load
from dagster_streamt.dagster import build_definitions


def _plain_metadata(md: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in md.items():
        if isinstance(v, dg.TableSchema):
            out[k] = ("schema", [(c.name, c.type) for c in v.columns])
        elif isinstance(v, dg.TableColumnLineage):
            out[k] = ("lineage", {col: [(d.asset_key.path, d.column_name) for d in deps]
                                  for col, deps in v.deps_by_column.items()})
        else:
            out[k] = ("raw", v)
    return out


def _rebuild_metadata(plain: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, (kind, v) in plain.items():
        if kind == "schema":
            out[k] = dg.TableSchema(columns=[dg.TableColumn(name=n, type=t) for n, t in v])
        elif kind == "lineage":
            out[k] = dg.TableColumnLineage(deps_by_column={
                col: [dg.TableColumnDep(asset_key=dg.AssetKey(p), column_name=c) for p, c in deps]
                for col, deps in v.items()})
        else:
            out[k] = v
    return out


def plain_specs(specs: list[dg.AssetSpec]) -> list[dict[str, Any]]:
    return [{"key": s.key.path, "deps": [d.asset_key.path for d in s.deps], "description": s.description,
             "group_name": s.group_name, "owners": list(s.owners), "tags": dict(s.tags), "kinds": set(s.kinds),
             "code_version": s.code_version, "metadata": _plain_metadata(dict(s.metadata)),
             "skippable": s.skippable} for s in specs]


def rebuild_spec(p: dict[str, Any]) -> dg.AssetSpec:
    return dg.AssetSpec(key=dg.AssetKey(p["key"]), deps=[dg.AssetKey(d) for d in p["deps"]],
                        description=p["description"], group_name=p["group_name"], owners=p["owners"],
                        tags=p["tags"], kinds=p["kinds"], code_version=p["code_version"],
                        metadata=_rebuild_metadata(p["metadata"]), skippable=p["skippable"])


def floor_definitions(models: list[dict[str, Any]], others: list[dict[str, Any]],
                      checks: list[tuple[str, list[str], str | None]],
                      schedules: list[tuple[str, str, list[list[str]]]]) -> dg.Definitions:
    specs = [rebuild_spec(p) for p in models]
    check_specs = [dg.AssetCheckSpec(name=n, asset=dg.AssetKey(k), description=d) for n, k, d in checks]

    @dg.multi_asset(name="floor_models", specs=specs, check_specs=check_specs, can_subset=True)
    def _models(context):  # type: ignore[no-untyped-def]
        yield from ()

    jobs = [dg.ScheduleDefinition(name=name, cron_schedule=cron, job=dg.define_asset_job(
        f"{name}_job", selection=dg.AssetSelection.assets(*(dg.AssetKey(k) for k in keys))))
        for name, cron, keys in schedules]
    defs = dg.Definitions(assets=[_models, *(rebuild_spec(p) for p in others)], schedules=jobs)
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
        checks = [(c.name, c.asset_key.path, c.description) for c in models_def.check_specs]
        schedules = [(sd.name, sd.cron_schedule, [k.path for k in defs.resolve_job_def(sd.job_name)
                                                   .asset_layer.selected_asset_keys]) for sd in defs.schedules]
        plain_models, plain_others = plain_specs(specs), plain_specs(others)
        warm = timed(lambda r=root: ours(r), args.runs)
        floor = timed(lambda m=plain_models, o=plain_others, c=checks, s=schedules: floor_definitions(m, o, c, s),
                      args.runs)
        ratio = warm / floor
        ok &= ratio <= 1.5
        print(f"{n:>7,}  {cold:>17.2f}s  {warm:>9.2f}s  {floor:>13.2f}s  {ratio:>5.2f}x  "
              f"{'PASS' if ratio <= 1.5 else 'MISS'} (<= 1.5x)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
