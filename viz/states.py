"""Each async fn's and task's state machine as a ``graphviz.Digraph``.

One cluster per suspending function (callees first, then tasks in
topological order). Nodes: ``start`` (state 0), one node per await point of
the function's own state word, labelled ``sN line L: what`` with N the site
number (the value codegen saves in the state word), and ``done`` (state -1).
An async block has a state word of its own: it is a cluster nested in its
function's, reached by a dashed edge from the await that drives it.

Edges approximate the transitions from the IR, without building a real
control-flow graph: the body is walked in order keeping the set of places
control can be in ("the frontier", each with an optional edge label). An
await point takes an edge from every frontier place and becomes the frontier;
an ``if`` unions its branches' frontiers; a loop adds back-edges from the end
of its body (and its ``continue`` points) to the first await points inside it
(labelled ``loop``), and leaves with its ``break`` points (``while`` and
``for`` also by their condition); ``return`` goes to ``done``. Every await
point has a self-loop ``pending``: the poll that finds it not ready. A dashed
edge ``embeds frame (N bytes)`` goes from each await of a suspending async
fn to that callee's cluster. A function that never suspends is one note node.

Nodes and edges are added in source order, edges de-duplicated in first-seen
order, so the DOT text is deterministic.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import graphviz

from gasync.planner import ir
from gasync.planner.model import Function, Plan, TaskDef
from gasync.planner.printer import describe
from gasync.runtime.trace import site_label

Place = tuple[str, str]  # (node id, label of the edge leaving it; "" for none)


@dataclass
class _Loop:
    """A loop being walked: its entry frontier, the await points its body starts
    with (targets of back-edges), and the places its breaks and continues leave from."""

    entry: list[Place]
    firsts: list[tuple[str, str]] = field(default_factory=list)  # (target, edge label)
    breaks: list[Place] = field(default_factory=list)
    continues: list[Place] = field(default_factory=list)


class _Machine:
    """The nodes and edges of one state word (a function's, or an async block's).

    A loop's body is walked from a placeholder place standing for the loop's
    entry; an edge out of the placeholder records its target as one of the
    loop's first await points and is drawn from the entry's real places.
    """

    def __init__(self, plan: Plan, g: graphviz.Digraph, prefix: str):
        self.plan, self.g, self.prefix = plan, g, prefix
        self.edges: dict[tuple[str, str], list[str]] = {}
        self.loops: dict[str, _Loop] = {}
        self.embeds: list[tuple[str, str, int]] = []  # (await node, callee, how many frames)
        self.blocks: list[tuple[str, ir.AsyncBlock]] = []  # (await node, the block it drives)

    def draw(self, body: tuple[ir.Stmt, ...]) -> None:
        start, done = f"{self.prefix}.start", f"{self.prefix}.done"
        self.g.node(start, "start", shape="circle")
        frontier = self.body(body, [(start, "")])
        self.g.node(done, "done", shape="doublecircle")
        self.go(frontier, done)
        for (u, v), labels in self.edges.items():
            for label in dict.fromkeys(x for x in labels if x or len(set(labels)) == 1):
                self.g.edge(u, v, label=label or None)

    def go(self, frontier: list[Place], target: str, extra: str = "") -> None:
        for node, label in frontier:
            loop = self.loops.get(node)
            if loop is None:
                self.edges.setdefault((node, target), []).append("; ".join(x for x in (label, extra) if x))
            elif (target, extra) not in loop.firsts:
                loop.firsts.append((target, extra))  # drawn once the loop's back-edges are known

    def body(self, stmts: tuple[ir.Stmt, ...], frontier: list[Place]) -> list[Place]:
        for s in stmts:
            frontier = self.stmt(s, frontier)
        return frontier

    def stmt(self, s: ir.Stmt, frontier: list[Place]) -> list[Place]:
        if isinstance(s, ir.AwaitS) and s.suspends:
            return [(self.await_point(s, frontier), "")]
        if isinstance(s, ir.Select):
            node = self.await_point(s, frontier)
            return [p for arm in s.arms for p in self.body(arm.body, [(node, describe(arm.future))])]
        if isinstance(s, ir.ForAwait):
            node = self.await_point(s, frontier)
            return self.loop(s.body, [(node, "item")], [(node, "closed")], head=node)
        if isinstance(s, ir.If):
            return self.body(s.then, frontier) + self.body(s.orelse, frontier)
        if isinstance(s, ir.Loop):
            return self.loop(s.body, frontier, [])
        if isinstance(s, ir.For) and s.kind == "bulk":
            return [(self.bulk(s, frontier), "")]
        if isinstance(s, ir.While | ir.For):
            return self.loop(s.body, frontier, frontier, exits_each_round=True)
        innermost = self.loops[next(reversed(self.loops))] if self.loops else None
        if isinstance(s, ir.Break | ir.Continue) and innermost is not None:
            (innermost.breaks if isinstance(s, ir.Break) else innermost.continues).extend(frontier)
            return []
        if isinstance(s, ir.Return):
            self.go(frontier, f"{self.prefix}.done")
            return []
        return frontier

    def loop(
        self,
        body: tuple[ir.Stmt, ...],
        entry: list[Place],
        exits: list[Place],
        head: str = "",
        exits_each_round: bool = False,
    ) -> list[Place]:
        """Walk a loop's body once, add its back-edges, and return where control leaves it.

        The loop's start is reached from its entry and, again, from the end of
        its body and its continues (the back-edges, labelled ``loop``).
        """
        key = f"@loop{len(self.loops)}"
        loop = self.loops[key] = _Loop(entry, firsts=[(head, "")] if head else [])
        end = self.body(body, [(key, "")])
        del self.loops[key]
        again = [(n, "; ".join(x for x in (lbl, "loop") if x)) for n, lbl in end + loop.continues if n != key]
        starts = (entry if not head else []) + again
        for target, extra in loop.firsts:
            self.go(starts, target, extra)
        out = exits + loop.breaks
        if exits_each_round or not loop.firsts:  # the condition is tested after each round
            out += end + loop.continues
        return _resolve(out, key, entry + again if not head else again)

    def bulk(self, s: ir.For, frontier: list[Place]) -> str:
        """A ``bulk for`` suspends its task until idle warps have run every chunk."""
        node = f"{self.prefix}.bulk{s.loop_id}"
        self.g.node(node, f"line {s.span.line}: bulk for {s.var} (waits for its chunks)", shape="box", style="rounded")
        self.go(frontier, node)
        self.edges.setdefault((node, node), []).append("pending")
        return node

    def await_point(self, s: ir.AwaitS | ir.Select | ir.ForAwait, frontier: list[Place]) -> str:
        node = f"{self.prefix}.s{s.site}"
        self.g.node(node, site_label(s), shape="box", style="rounded")
        self.go(frontier, node)
        self.edges.setdefault((node, node), []).append("pending")
        calls: Counter[str] = Counter()
        for f in _leaves(s):
            if isinstance(f, ir.AsyncCall) and self.plan.function(f.fn).suspends:
                calls[f.fn] += 1
            elif isinstance(f, ir.AsyncBlock) and f.suspends:
                self.blocks.append((node, f))
        self.embeds += [(node, fn, n) for fn, n in calls.items()]
        return node


def _resolve(places: list[Place], key: str, entry: list[Place]) -> list[Place]:
    """``places`` with a loop's placeholder replaced by the loop's entry, duplicates dropped."""
    out: list[Place] = []
    for p in places:
        for q in entry if p[0] == key else [p]:
            if q not in out:
                out.append(q)
    return out


def _leaves(s: ir.AwaitS | ir.Select | ir.ForAwait) -> list[ir.Future]:
    """The futures an await point drives directly, joins flattened."""
    todo: list[ir.Future] = [s.future] if isinstance(s, ir.AwaitS) else []
    if isinstance(s, ir.Select):
        todo = [arm.future for arm in s.arms]
    out: list[ir.Future] = []
    while todo:
        f = todo.pop(0)
        if isinstance(f, ir.Join):
            todo = [*f.futures, *todo]
        else:
            out.append(f)
    return out


def _draw_machine(
    plan: Plan, g: graphviz.Digraph, prefix: str, body: tuple[ir.Stmt, ...]
) -> list[tuple[str, str, int]]:
    """Draw one state word into ``g`` and its async blocks as nested clusters; the embed edges to add."""
    m = _Machine(plan, g, prefix)
    m.draw(body)
    embeds = list(m.embeds)
    for k, (node, block) in enumerate(m.blocks, 1):
        sub = f"{node}.blk{k}"
        with g.subgraph(name=f"cluster_{sub}") as c:
            c.attr(label=f"async block at line {block.span.line}", style="dashed")
            embeds += _draw_machine(plan, c, sub, block.body)
        g.edge(node, f"{sub}.start", label="drives async block", style="dashed")
    return embeds


def _title(plan: Plan, fn: Function, task: TaskDef | None) -> str:
    if task is None:
        head = f"async fn {fn.name}"
    else:
        head = f"task {task.name} x{task.count}" if task.var is not None else f"task {task.name}"
    if not fn.suspends:
        return f"{head}\\ninline: never suspends"
    return f"{head}  (frame {plan.frame(fn.name).bytes} bytes)"


def states_graph(plan: Plan) -> graphviz.Digraph:
    """Build the drawing; the caller renders or writes it."""
    g = graphviz.Digraph(
        name="states",
        graph_attr={"compound": "true", "rankdir": "TB", "fontname": "Helvetica"},
        node_attr={"fontname": "Helvetica", "fontsize": "11"},
        edge_attr={"fontname": "Helvetica", "fontsize": "9"},
    )
    units = [(fn, None) for fn in plan.functions if fn.kind == "async"] + [(t.body, t) for t in plan.tasks]
    embeds: list[tuple[str, str, int]] = []
    for fn, task in units:
        if not fn.suspends:
            g.node(f"{fn.name}.inline", _title(plan, fn, task), shape="note")
            continue
        with g.subgraph(name=f"cluster_{fn.name}") as c:
            c.attr(label=_title(plan, fn, task), labeljust="l")
            embeds += _draw_machine(plan, c, fn.name, fn.body)
    for node, callee, n in embeds:
        size = plan.frame(callee).bytes
        label = f"embeds frame ({size} bytes)" if n == 1 else f"embeds {n} frames ({size} bytes each)"
        g.edge(node, f"{callee}.start", label=label, style="dashed", lhead=f"cluster_{callee}")
    return g


def states_graph_dot(plan: Plan) -> str:
    """The state machines as DOT source text."""
    return str(states_graph(plan).source)
