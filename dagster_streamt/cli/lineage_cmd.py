"""``streamt lineage``: downstream impact and upstream provenance as ASCII, JSON or Mermaid."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.ids import name_of
from ..graph.graph import Graph, Node
from ..spec.suggest import did_you_mean
from .common import graph_or_exit, load_or_exit, project_command

if TYPE_CHECKING:
    from ..core.loaded import LoadedProject


def _focus(graph: Graph, name: str) -> str:
    nid = graph.resolve(name)
    if nid is None or graph.nodes[nid].type == "test":
        hint = did_you_mean(name, sorted({n.name for n in graph.nodes.values() if n.type != "test"}))
        raise click.UsageError(f"no model, source or exposure named {name!r}" + (f"; {hint}" if hint else ""))
    return nid


@project_command("lineage")
@click.option("-m", "--model", "model", default=None, help="Focus node (model, source or exposure name).")
@click.option("--upstream", is_flag=True, help="Show where the focus node's data comes from.")
@click.option("--downstream", is_flag=True, help="Show what depends on the focus node (impact).")
@click.option("--tag", "tags", multiple=True, help="Only nodes with this tag (repeatable).")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Limit the tree depth.")
@click.option("--format", "fmt", type=click.Choice(["ascii", "json", "mermaid", "openlineage"]), default="ascii",
              show_default=True, help="openlineage: the whole graph as OpenLineage job/dataset events (JSON lines).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to a file instead of the terminal.")
@click.option("-c", "--column", default=None, metavar="MODEL.COLUMN", help="Column-level lineage of one column.")
@click.option("--columns", "list_columns", is_flag=True, help="With --model: its columns and their sources.")
@click.option("--classification", default=None, metavar="CLASS[,CLASS]",
              help="Where classified columns flow (e.g. sensitive), down to exposures.")
@click.option("--direct-only", is_flag=True, help="Column lineage: follow DIRECT edges only.")
@click.option("--runs", is_flag=True, help="With --model: add each model's last run from the Dagster instance.")
@click.option("--observed", type=click.Path(exists=True, dir_okay=False), default=None, metavar="EVENTS.jsonl",
              help="Compare the project graph with OpenLineage events that really ran.")
def lineage(project_dir: str, env: str | None, model: str | None, upstream: bool, downstream: bool,
            tags: tuple[str, ...], depth: int | None, fmt: str, output: str | None, column: str | None,
            list_columns: bool, classification: str | None, direct_only: bool, runs: bool,
            observed: str | None) -> None:
    """Table-level lineage of the whole project or around one node; column-level with --column."""
    from ..lineage.render import ascii_focus, ascii_graph, to_json, to_mermaid

    if (upstream or downstream) and not (model or column):
        raise click.UsageError("--upstream/--downstream need --model NAME or --column MODEL.COLUMN")
    if list_columns and not model:
        raise click.UsageError("--columns needs --model NAME")
    if not upstream and not downstream:
        upstream = downstream = True
    if observed:
        from ..openlineage.observed import compare, diff_text

        diff = compare(load_or_exit(project_dir, env), Path(observed))
        text = json.dumps(diff.to_dict(), indent=2, sort_keys=True) if fmt == "json" else diff_text(diff)
    elif fmt == "openlineage":
        text = _openlineage_export(load_or_exit(project_dir, env))
    elif column or list_columns or classification:
        loaded = load_or_exit(project_dir, env)
        text = _column_views(loaded, model, column, list_columns, classification, upstream, downstream, fmt,
                             direct_only)
    elif model:
        graph = graph_or_exit(project_dir, env)
        nid = _focus(graph, model)
        ids = {nid}
        if upstream:
            ids |= graph.upstream(nid, depth)
        if downstream:
            ids |= graph.downstream(nid, depth)
        if tags:
            ids = {i for i in ids if i == nid or set(tags) & set(graph.nodes[i].tags)}
        if runs:
            text = _with_runs(project_dir, env, graph, nid, upstream, downstream, depth, fmt, ids)
        elif fmt == "ascii":
            text = ascii_focus(graph, nid, upstream, downstream, depth)
        elif fmt == "json":
            text = to_json(graph, ids, focus=nid, with_impact=downstream)
        else:
            text = to_mermaid(graph, ids, focus=nid)
    else:
        graph = graph_or_exit(project_dir, env)
        ids = set(graph.nodes)
        if tags:
            ids = {i for i in ids if set(tags) & set(graph.nodes[i].tags)}
            if not ids:
                known = sorted({t for n in graph.nodes.values() for t in n.tags})
                raise click.UsageError(f"no node has tag(s) {', '.join(tags)}; known tags: {', '.join(known)}")
        if fmt == "ascii":
            text = ascii_graph(graph, ids if tags else None)
        elif fmt == "json":
            text = to_json(graph, ids)
        else:
            text = to_mermaid(graph, ids)
    if output:
        Path(output).write_text(text + "\n", encoding="utf-8")
        click.echo(f"Wrote {output}")
    else:
        click.echo(text)
    sys.exit(0)


def _with_runs(project_dir: str, env: str | None, graph: Graph, nid: str, upstream: bool, downstream: bool,
               depth: int | None, fmt: str, ids: set[str]) -> str:
    """The lineage tree with each model's last run (status, start, duration, rows) from Dagster."""
    from ..dagster.run_history import LastRun, last_runs
    from ..lineage.render import ascii_focus
    from .dagster_exec import instance_or_exit, location_or_exit

    loaded = load_or_exit(project_dir, env)
    keys = location_or_exit(loaded).keys
    with instance_or_exit(loaded) as instance:
        history = last_runs(loaded, instance, keys)

    def describe(r: LastRun) -> str:
        rows = f"  {r.rows:,} rows" if r.rows is not None else ""
        return f"{r.status}  {r.started:%Y-%m-%d %H:%M:%S}  {r.seconds:.1f} s{rows}"

    if fmt == "json":
        return json.dumps({n: {"status": r.status, "started": r.started.isoformat(), "finished": r.finished.isoformat(),
                               "seconds": round(r.seconds, 3), "rows": r.rows, "run_id": r.run_id, "error": r.error}
                           for n, r in sorted(history.items()) if f"model.{n}" in ids}, indent=2, sort_keys=True)
    if fmt != "ascii":
        raise click.UsageError("--runs works with --format ascii or json")

    def annotate(node: Node) -> str:
        r = history.get(node.name) if node.type == "model" else None
        return f"  {describe(r)}" if r else ("  (never run)" if node.type == "model" else "")

    focus = graph.nodes[nid]
    last = history.get(focus.name) if focus.type == "model" else None
    footer = (f"Last run: {last.status}  started {last.started:%H:%M:%S}  finished {last.finished:%H:%M:%S}  "
              f"duration {last.seconds:.1f} s" + (f"  ({last.error})" if last.error else "")) if last else \
        ("Last run: never" if focus.type == "model" else None)
    return ascii_focus(graph, nid, upstream, downstream, depth, annotate=annotate, footer=footer)


def _openlineage_export(loaded: LoadedProject) -> str:
    """Static lineage (no run needed) so a catalog shows the graph before the first run."""
    from ..lineage.project_columns import column_lineage
    from ..openlineage.static import static_events

    events = static_events(loaded, columns=column_lineage(loaded))
    return "\n".join(json.dumps(e, sort_keys=True, separators=(",", ":")) for e in events)


def _column_views(loaded: LoadedProject, model: str | None, column: str | None, list_columns: bool,
                  classification: str | None, upstream: bool, downstream: bool, fmt: str, direct_only: bool) -> str:
    from ..lineage import column_render as cr
    from ..lineage.project_columns import column_lineage, propagate_classification

    lineage = column_lineage(loaded)
    if classification:
        wanted = {c.strip() for c in classification.split(",") if c.strip()}
        report = propagate_classification(loaded, lineage)
        if fmt == "json":
            hits = [c for c in report.columns if set(c.classes) & wanted]
            return json.dumps({"columns": [c.__dict__ for c in hits], "exposures": {
                e: [f"{c.relation}.{c.column}" for c in r if set(c.classes) & wanted]
                for e, r in report.exposures.items()}}, indent=2, sort_keys=True, default=list)
        return cr.classification_text(report, wanted)
    if list_columns:
        nid = _focus(loaded.graph, model or "")
        name = name_of(nid)
        if name not in lineage.models:
            raise click.UsageError(f"{name!r} is not a model; --columns lists a model's columns")
        ml = lineage.models[name]
        if fmt == "json":
            return json.dumps(ml.to_dict(), indent=2, sort_keys=True)
        return cr.model_columns_text(ml)
    assert column is not None
    rel, sep, col = column.partition(".")
    if not sep or not col:
        raise click.UsageError("--column takes MODEL.COLUMN, e.g. customer_orders.total_spent")
    known = lineage.models.get(rel)
    if known is None:
        src = loaded.project.sources.get(rel)
        if src is None:
            hint = did_you_mean(rel, [*lineage.models, *loaded.project.sources])
            raise click.UsageError(f"no model or source named {rel!r}" + (f"; {hint}" if hint else ""))
        cols = [c.name for c in src.columns]
    else:
        cols = list(known.columns)
    if col not in cols:
        hint = did_you_mean(col, cols)
        raise click.UsageError(f"{rel!r} has no column {col!r}" + (f"; {hint}" if hint else "")
                               + (f" (columns: {', '.join(cols)})" if not hint else ""))
    render = {"ascii": cr.column_ascii, "json": cr.column_json, "mermaid": cr.column_mermaid}[fmt]
    return render(lineage, rel, col, upstream, downstream, direct_only)

