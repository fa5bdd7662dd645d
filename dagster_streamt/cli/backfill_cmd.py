"""``streamt backfill``: fill a range of partitions of partitioned models, through Dagster in-process
(the runs appear in the UI history with their partition range)."""

from __future__ import annotations

import sys

import click

from ..core import metadata as meta
from ..core.ids import names_of
from .common import EXIT_INVALID, load_or_exit, project_command, select_or_usage

RANGE_START, RANGE_END, PARTITION = ("dagster/asset_partition_range_start", "dagster/asset_partition_range_end",
                                     "dagster/partition")


@project_command("backfill")
@click.argument("selection")
@click.option("--from", "first", required=True, metavar="KEY|DATE", help="First partition (key or date).")
@click.option("--to", "last", required=True, metavar="KEY|DATE", help="Last partition, included (key or date).")
@click.option("--per-partition", is_flag=True,
              help="One run per partition instead of one run for the whole range (the default).")
@click.option("--full-refresh", is_flag=True,
              help="Drop every stored partition of these models first (after a change of partitioning).")
def backfill(project_dir: str, env: str | None, selection: str, first: str, last: str, per_partition: bool,
             full_refresh: bool) -> None:
    """Materialize partitions FIRST..LAST of the partitioned models in SELECTION (selection syntax).

    By default the whole range is one run: one read of the inputs, one write (see `partitioned_by.backfill`).
    """
    from ..dagster.partitions import keys_between, partitions_def
    from ..spark.run.partitions import describe, signature

    loaded = load_or_exit(project_dir, env)
    ids = select_or_usage(loaded.graph, selection)
    models = loaded.project.models
    names = names_of(loaded.graph.topological_order(ids), "model")
    partitioned = [n for n in names if models[n].partitioned_by is not None]
    if not partitioned:
        raise click.UsageError(f"no partitioned model in {selection!r}; add `partitioned_by:` to a table model, "
                               "or use `streamt run` for unpartitioned models")
    skipped = [n for n in names if n not in partitioned]
    if skipped:
        click.echo(f"note: not partitioned, not backfilled: {', '.join(skipped)}")
    pbs = {signature(models[n].partitioned_by): models[n].partitioned_by for n in partitioned}
    if len(pbs) > 1:
        kinds = "; ".join(f"{describe(pb)}" for pb in pbs.values())
        raise click.UsageError(f"the selection mixes partitionings ({kinds}); backfill each separately")
    pb = next(iter(pbs.values()))
    assert pb is not None
    try:
        keys = keys_between(partitions_def(pb), first, last)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if not keys:
        raise click.UsageError(f"no partition of {partitioned[0]} ({describe(pb)}) between {first} and {last}")
    from .dagster_exec import execute, report_failures, shared_session

    tags = {meta.COMMAND_TAG: "backfill"}
    reset = partitioned if full_refresh else []
    one_run = not per_partition and pb.backfill == "single_run"
    label = f"{keys[0]}..{keys[-1]}" if len(keys) > 1 else keys[0]
    if one_run or len(keys) == 1:
        what = f"Backfilling {len(keys)} partition(s) {label} of {', '.join(partitioned)} in one run"
        part = {PARTITION: keys[0]} if len(keys) == 1 else {RANGE_START: keys[0], RANGE_END: keys[-1]}
        outcomes = [execute(loaded, env, partitioned, {**tags, **part}, what, full_refresh=reset)]
    else:
        outcomes = []
        with shared_session():  # one Spark session for all the runs
            for i, key in enumerate(keys, 1):
                what = f"Partition {key} ({i}/{len(keys)}) of {', '.join(partitioned)}"
                outcomes.append(execute(loaded, env, partitioned, {**tags, PARTITION: key}, what,
                                        full_refresh=reset if i == 1 else None))  # only the first starts over
    bad = [o for o in outcomes if not o.success]
    if bad:
        for o in bad:
            report_failures(o)
        sys.exit(EXIT_INVALID)
