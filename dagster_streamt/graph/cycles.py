"""Find every elementary cycle (Tarjan's SCCs, then Johnson's circuit search inside each one).

Reported as ``a -> b -> a``, each rotated to start at its smallest id so output is stable. A cap
keeps a pathological project from printing millions of cycles; the count of the rest is given.
"""

from __future__ import annotations

from .graph import Graph


def strongly_connected(graph: Graph) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in graph.nodes:
        if root in index:
            continue
        work = [(root, iter(graph.downstream_of(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.downstream_of(nxt))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in graph.downstream_of(node):
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
