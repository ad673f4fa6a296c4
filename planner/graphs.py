"""The program's graphs, built with networkx (which never leaves planner/).

- the call graph of fns and async fns (edges caller -> callee): recursion is a
  cycle in it, and callees are checked before their callers;
- the task graph: ``after`` edges (predecessor -> successor), plus channel
  edges (every sender to every receiver) and signal edges (setter to waiter)
  for drawing and for the concurrency analysis.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import networkx as nx

from gasync.dsl import ast
from gasync.dsl.diagnostics import Note
from gasync.planner.effects import Effects
from gasync.planner.errors import AfterCycleError, RecursionError_


def ast_nodes(node: Any) -> Iterator[Any]:
    """Every AST node inside ``node`` (pre-order), following dataclass fields."""
    if isinstance(node, tuple):
        for x in node:
            yield from ast_nodes(x)
    elif dataclasses.is_dataclass(node) and not isinstance(node, ast.Span):
        yield node
        for f in dataclasses.fields(node):
            if f.compare:
                yield from ast_nodes(getattr(node, f.name))


def call_graph(program: ast.Program) -> nx.DiGraph:
    fns = {i.name: i for i in program.items if isinstance(i, ast.FnDef)}
    g = nx.DiGraph()
    for name, fn in fns.items():
        g.add_node(name)
        for node in ast_nodes(fn.body):
            if isinstance(node, ast.Call) and node.func in fns:
                g.add_edge(name, node.func, span=node.span)
    return g


def check_recursion(program: ast.Program, g: nx.DiGraph) -> list[RecursionError_]:
    """One error per cycle of the call graph, naming it."""
    errors = []
    order = {i.name: k for k, i in enumerate(program.items)}
    for comp in sorted(nx.strongly_connected_components(g), key=lambda c: min(order[n] for n in c)):
        first = min(comp, key=lambda n: order[n])
        if len(comp) == 1 and not g.has_edge(first, first):
            continue
        cycle = _cycle_from(g.subgraph(comp), first)
        call_span = g.edges[cycle[0], cycle[1]]["span"]
        async_word = "async fns" if all(_is_async(program, n) for n in comp) else "functions"
        errors.append(
            RecursionError_(
                f"recursion among {async_word}: {' -> '.join(cycle)}",
                call_span,
                (Note("every frame needs a size known at compile time, so calls cannot form a cycle"),),
            )
        )
    return errors


def _is_async(program: ast.Program, name: str) -> bool:
    return any(isinstance(i, ast.FnDef) and i.name == name and i.is_async for i in program.items)


def _cycle_from(g: Any, start: str) -> list[str]:
    """The shortest cycle through ``start`` (g is strongly connected through it)."""
    if g.has_edge(start, start):
        return [start, start]
    best: list[str] | None = None
    for succ in sorted(g.successors(start)):
        path = nx.shortest_path(g, succ, start)
        if best is None or len(path) + 1 < len(best):
            best = [start, *path]
    assert best is not None
    return best


def callee_first(g: nx.DiGraph, order: dict[str, int]) -> list[str]:
    """Functions ordered so that every callee comes before its callers; the members of a
    cycle (recursion, an error of its own) in source order among themselves."""
    comp = {n: k for k, c in enumerate(nx.strongly_connected_components(g)) for n in c}
    rev = nx.DiGraph()
    rev.add_nodes_from(g)
    rev.add_edges_from((v, u) for u, v in g.edges if comp[u] != comp[v])
    return list(nx.lexicographical_topological_sort(rev, key=lambda n: order[n]))


def recursive_names(g: nx.DiGraph) -> set[str]:
    """The functions that lie on a cycle of the call graph."""
    return {n for c in nx.strongly_connected_components(g) for n in c if len(c) > 1 or g.has_edge(n, n)}


def task_graph(tasks: list[ast.Task], known: set[str]) -> nx.MultiDiGraph:
    """Tasks as nodes, ``after`` edges (predecessor -> successor) keyed 'after'."""
    g = nx.MultiDiGraph()
    for t in tasks:
        g.add_node(t.name, span=t.span)
    for t in tasks:
        for pred in t.after:
            if pred.id in known:
                g.add_edge(pred.id, t.name, key="after", kind="after", span=pred.span)
    return g


def add_flows(g: nx.MultiDiGraph, effects: dict[str, Effects]) -> nx.MultiDiGraph:
    """Add channel edges (every sender task to every receiver task) and signal edges
    (every setter to every waiter); ``effects`` holds each task's transitive effects.
    Receivers and waiters are indexed by name first, so the cost is that of the edges."""
    tasks = [t for t in g.nodes if t in effects]
    position = {t: k for k, t in enumerate(tasks)}
    recvs: dict[str, list[str]] = {}
    waits: dict[str, list[str]] = {}
    for t in tasks:
        for ch in effects[t].recvs:
            recvs.setdefault(ch, []).append(t)
        for sig in effects[t].waits:
            waits.setdefault(sig, []).append(t)
    for src in tasks:
        eff = effects[src]
        dsts = {d for ch in eff.sends for d in recvs.get(ch, ())} | {d for s in eff.sets for d in waits.get(s, ())}
        for dst in sorted(dsts, key=position.__getitem__):
            for ch in sorted(eff.sends & effects[dst].recvs):
                g.add_edge(src, dst, key=f"channel:{ch}", kind="channel", name=ch)
            for sig in sorted(eff.sets & effects[dst].waits):
                g.add_edge(src, dst, key=f"signal:{sig}", kind="signal", name=sig)
    return g


def after_graph(g: nx.MultiDiGraph) -> nx.DiGraph:
    """Only the ``after`` edges of a task graph (every task kept as a node)."""
    after = nx.DiGraph([(u, v) for u, v, k in g.edges(data="kind") if k == "after"])
    after.add_nodes_from(g.nodes)
    return after


def topo_tasks(g: nx.MultiDiGraph, order: dict[str, int], owner: dict[str, str] | None = None) -> list[str]:
    """A topological order of ``after``; raises AfterCycleError naming a cycle (a group's task
    by its group, ``owner`` giving each one's: the user wrote ``after`` of the group)."""
    after = after_graph(g)
    try:
        return list(nx.lexicographical_topological_sort(after, key=lambda n: order[n]))
    except nx.NetworkXUnfeasible:
        cycle_edges = nx.find_cycle(after)
        start = min((u for u, _ in cycle_edges), key=lambda n: order[n])
        cycle = _cycle_from(after.subgraph([u for u, _ in cycle_edges]), start)
        span = g.edges[cycle[0], cycle[1], "after"]["span"]
        named = [f"group {owner[n]}" if owner and n in owner else n for n in cycle]
        named = [n for k, n in enumerate(named) if k == 0 or n != named[k - 1]]
        raise AfterCycleError(
            f"cycle in 'after' edges: {' -> '.join(named)}",
            span,
            (Note("a task starts only when all the tasks it comes after are done, so none of these could start"),),
        ) from None
