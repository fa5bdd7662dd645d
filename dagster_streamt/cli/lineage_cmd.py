"""``streamt lineage``: downstream impact and upstream provenance as ASCII, JSON or Mermaid."""

from __future__ import annotations

import sys

import click

from ..graph.graph import Graph
from ..spec.suggest import did_you_mean
from .common import EXIT_USAGE, guarded, load_or_exit, project_options


def _focus(graph: Graph, name: str) -> str:
    nid = graph.resolve(name)
    if nid is None or graph.nodes[nid].type == "test":
        hint = did_you_mean(name, sorted({n.name for n in graph.nodes.values() if n.type != "test"}))
        raise click.UsageError(f"no model, source or exposure named {name!r}" + (f"; {hint}" if hint else ""))
    return nid


@click.command("lineage")
@project_options
@click.option("-m", "--model", "model", default=None, help="Focus node (model, source or exposure name).")
@click.option("--upstream", is_flag=True, help="Show where the focus node's data comes from.")
@click.option("--downstream", is_flag=True, help="Show what depends on the focus node (impact).")
@click.option("--tag", "tags", multiple=True, help="Only nodes with this tag (repeatable).")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Limit the tree depth.")
@click.option("--format", "fmt", type=click.Choice(["ascii", "json", "mermaid"]), default="ascii",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to a file instead of the terminal.")
@guarded
def lineage(project_dir: str, env: str | None, model: str | None, upstream: bool, downstream: bool,
            tags: tuple[str, ...], depth: int | None, fmt: str, output: str | None) -> None:
    """Table-level lineage of the whole project or around one node."""
    from ..lineage.render import ascii_focus, ascii_graph, to_json, to_mermaid

    if (upstream or downstream) and not model:
        raise click.UsageError("--upstream/--downstream need --model NAME")
    loaded = load_or_exit(project_dir, env)
    graph = loaded.graph
    if model:
        nid = _focus(graph, model)
        if not upstream and not downstream:
            upstream = downstream = True
        ids = {nid}
        if upstream:
            ids |= graph.upstream(nid, depth)
        if downstream:
            ids |= graph.downstream(nid, depth)
        if tags:
            ids = {i for i in ids if i == nid or set(tags) & set(graph.nodes[i].tags)}
        if fmt == "ascii":
            text = ascii_focus(graph, nid, upstream, downstream, depth)
        elif fmt == "json":
            text = to_json(graph, ids, focus=nid, with_impact=downstream)
        else:
            text = to_mermaid(graph, ids, focus=nid)
    else:
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
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        click.echo(f"Wrote {output}")
    else:
        click.echo(text)
    sys.exit(0)


_ = EXIT_USAGE
