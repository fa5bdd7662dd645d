"""Find every elementary cycle (Tarjan's SCCs, then Johnson's circuit search inside each one).

Reported as ``a -> b -> a``, each rotated to start at its smallest id so output is stable. A cap
keeps a pathological project from printing millions of cycles; the count of the rest is given.
"""

from __future__ import annotations

from .graph import Graph


def strongly_connected(graph: Graph) -> list[list[str]]:
    """The components with a cycle, sorted (Kosaraju: nodes by finishing time of a search downstream,
    then each component is what a search upstream from the last finished one reaches)."""
    finished: list[str] = []
    seen: set[str] = set()
    for root in graph.nodes:
        if root in seen:
            continue
        seen.add(root)
        work = [(root, iter(graph.downstream_of(root)))]
        while work:
            node, it = work[-1]
            nxt = next((n for n in it if n not in seen), None)
            if nxt is None:
                work.pop()
                finished.append(node)
            else:
                seen.add(nxt)
                work.append((nxt, iter(graph.downstream_of(nxt))))
    out: list[list[str]] = []
    placed: set[str] = set()
    for root in reversed(finished):
        if root in placed:
            continue
        placed.add(root)
        comp, todo = [], [root]
        while todo:
            comp.append(node := todo.pop())
            ups = [u for u in graph.upstream_of(node) if u not in placed]
            placed.update(ups)
            todo += ups
        if len(comp) > 1 or root in graph.downstream_of(root):
            out.append(sorted(comp))
    return sorted(out)


def find_cycles(graph: Graph, limit: int = 200) -> tuple[list[list[str]], int]:
    """Return (cycles, number left out beyond ``limit``). Each cycle lists ids, first == last."""
    cycles: list[list[str]] = []
    extra = 0
    for comp in strongly_connected(graph):
        members = set(comp)
        for start in comp:  # Johnson: cycles whose smallest node is `start`
            allowed = {m for m in members if m >= start}
            path = [start]
            stack = [iter(n for n in graph.downstream_of(start) if n in allowed)]
            on_path = {start}
            while stack:
                advanced = False
                for nxt in stack[-1]:
                    if nxt == start:
                        if len(cycles) < limit:
                            cycles.append([*path, start])
                        else:
                            extra += 1
                    elif nxt not in on_path:
                        path.append(nxt)
                        on_path.add(nxt)
                        stack.append(iter(n for n in graph.downstream_of(nxt) if n in allowed))
                        advanced = True
                        break
                if not advanced:
                    stack.pop()
                    on_path.discard(path.pop())
                if extra > 100_000:
                    return sorted(cycles), extra
    return sorted(cycles), extra
