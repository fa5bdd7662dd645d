"""``streamt status``: every model's last run, freshness and test results, from the Dagster instance."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from ..core.durations import parse_duration
from .common import fail, load_or_exit, project_command


def _freshness(model: object, last: object, now: datetime) -> str:
    fresh = getattr(model, "freshness", None)
    if last is None or getattr(last, "status", "") != "COMPLETE":
        return "-" if fresh is None else "stale"
    if fresh is None:
        return "-"
    age = (now - last.finished).total_seconds()  # type: ignore[attr-defined]
    if fresh.error_after and age > parse_duration(fresh.error_after):
        return "ERROR"
    if fresh.warn_after and age > parse_duration(fresh.warn_after):
        return "warn"
    return "ok"


@project_command("status")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--lag", is_flag=True, help="Also show each Kafka source's messages and the consumer lag of the "
              "stream models reading it (end offsets minus their checkpoints' committed offsets; asks the broker).")
@click.option("--history", "history", metavar="MODEL", default=None,
              help="Instead: MODEL's recent Delta versions (version, time, operation, rows added/removed, what "
              "the refresh read), from the table's log without Spark.")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="With --history: how many versions.")
def status(project_dir: str, env: str | None, fmt: str, lag: bool, history: str | None = None,
           limit: int = 10) -> None:
    """Every model with its last run, freshness and test results (with --lag: Kafka sources' lag; with
    --history MODEL: that model's Delta versions)."""
    loaded = load_or_exit(project_dir, env)
    if history is not None:
        if lag:
            raise click.UsageError("--history and --lag are separate views; give one")
        from .status_history import show_history

        show_history(loaded, history, limit, fmt)
        return
    from ..dagster.run_history import last_checks, last_runs
    from .dagster_exec import instance_or_exit, location_or_exit
    from .status_lag import LagUnavailable, collect, echo_table

    lags, lag_error = None, None
    if lag:
        try:
            lags = collect(loaded)
        except LagUnavailable as exc:
            lag_error = str(exc)
    keys = location_or_exit(loaded).keys
    with instance_or_exit(loaded) as instance:
        runs = last_runs(loaded, instance, keys)
        checks = last_checks(loaded, instance, keys)
    now = datetime.now(UTC)
    rows = []
    for name in sorted(loaded.compiled.models):
        r = runs.get(name)
        mine = [c for c in checks if c.target == f"model.{name}"]
        rows.append({
            "model": name, "materialized": loaded.compiled.models[name].materialized,
            "status": r.status if r else "never run", "finished": r.finished.isoformat() if r else None,
            "seconds": round(r.seconds, 1) if r else None, "rows": r.rows if r else None,
            "freshness": _freshness(loaded.project.models[name], r, now),
            "tests_passed": sum(1 for c in mine if c.passed), "tests_failed": sum(1 for c in mine if c.passed is False),
            "failed_tests": [c.test for c in mine if c.passed is False],
        })
    if fmt == "json":
        doc: dict[str, object] = {"models": rows, "tests": [c.__dict__ | {"at": c.at.isoformat() if c.at else None}
                                                            for c in checks]}
        if lag:
            doc["kafka"] = [s.to_dict() for s in lags] if lags is not None else None
        click.echo(json.dumps(doc, indent=2, sort_keys=True, default=str))
        if lag_error:
            fail(lag_error)
        return
    click.echo(f"{'model':<28} {'type':<7} {'last run':<10} {'finished (UTC)':<20} {'rows':>10} {'fresh':<6} tests")
    for row in rows:
        finished = row["finished"][:19].replace("T", " ") if row["finished"] else "-"
        n_rows = f"{row['rows']:,}" if row["rows"] is not None else "-"
        tests = f"{row['tests_passed']} ok" + (f", {row['tests_failed']} failed ({', '.join(row['failed_tests'])})"
                                              if row["tests_failed"] else "")
        click.echo(f"{row['model']:<28} {row['materialized']:<7} {row['status']:<10} {finished:<20} {n_rows:>10} "
                   f"{row['freshness']:<6} {tests}")
    for c in (x for x in checks if x.target.startswith("source.")):
        state = "never run" if c.passed is None else ("ok" if c.passed else f"FAILED ({c.severity})")
        click.echo(f"{c.target:<28} test {c.test}: {state}")
    if lags is not None:
        echo_table(lags)
    if lag_error:  # the broker did not answer: one line (the models' status above still stands), exit 1
        fail(lag_error)
