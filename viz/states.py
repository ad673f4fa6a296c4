"""Each async fn's and task's state machine as a ``graphviz.Digraph``.

One cluster per suspending function (tasks in topological order, then the
async fns, callers first), laid out in rows by ``viz/statespage.py``.
Nodes: ``start`` (state 0), one node per await point of the function's own
state word, labelled ``sN line L: what`` with N the site number (the value
codegen saves in the state word), and ``done`` (state -1).
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
from gasync.planner.printer import describe, loop_text
from gasync.runtime.trace import site_label
from gasync.viz.statespage import Unit, lay_out
from gasync.viz.taskgraph import tip

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

    def __init__(self, plan: Plan, g: graphviz.Digraph, prefix: str, fn: Function, internal: dict[str, int]):
        self.plan, self.g, self.prefix, self.fn, self.internal = plan, g, prefix, fn, internal
        self.edges: dict[tuple[str, str], list[str]] = {}
        self.loops: dict[str, _Loop] = {}
        self.embeds: list[tuple[str, str, int]] = []  # (await node, callee, how many frames)
        self.blocks: list[tuple[str, ir.AsyncBlock]] = []  # (await node, the block it drives)
        self.nodes: list[tuple[str, str]] = []  # (node, label) in the order drawn

    def node(self, node: str, label: str, **attrs: str) -> None:
        self.g.node(node, label, **attrs)
        self.nodes.append((node, label))

    def draw(self, body: tuple[ir.Stmt, ...]) -> str:
        """Draw the machine; the node it ends at lowest: ``done``, or where an endless loop is."""
        start, done = f"{self.prefix}.start", f"{self.prefix}.done"
        self.node(start, "start", shape="circle", tooltip=f"{self.fn.name}: start")
        frontier = self.body(body, [(start, "")])
        last = self.nodes[-1][0]  # the last await point, the lowest if the body never ends
        self.node(done, "done", shape="doublecircle", tooltip=f"{self.fn.name}: done")
        self.go(frontier, done)
        for (u, v), labels in self.edges.items():
            if u == v and "pending" in labels:  # a poll that finds the await pending: the legend says so
                self.g.edge(u, v, color="gray50", style="dotted", tooltip="a poll that found the await pending")
                labels = [x for x in labels if x != "pending"]
                if not labels:
                    continue
            text = " / ".join(dict.fromkeys(x for x in labels if x))  # one edge, one label
            self.g.edge(u, v, label=text or None, tooltip=text or "next")
        return done if any(v == done for _, v in self.edges) else last

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
        if isinstance(s, ir.For) and (s.kind == "bulk" or (s.kind == "parallel" and self.numbered(s) is not None)):
            return [(self.loop_state(s, frontier), "")]
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
        # a for await whose body can go round without suspending goes from its head, with an item, to its head
        back = _resolve(end + loop.continues, key, entry) if head else [p for p in end + loop.continues if p[0] != key]
        again = [(n, "; ".join(x for x in (lbl, "loop") if x)) for n, lbl in back]
        for target, extra in loop.firsts:
            # a loop headed by an await (for await) enters its body from the head, with an item,
            # and goes round to the head again; any other loop enters and goes round to the same places
            starts = (again if target == head else entry) if head else entry + again
            self.go(starts, target, extra)
        out = exits + loop.breaks
        if exits_each_round or not loop.firsts:  # the condition is tested after each round
            out += end + loop.continues
        return _resolve(out, key, entry + again if not head else entry)

    def loop_text(self, s: ir.For) -> str:
        """What codegen calls a bulk or parallel for's state (``runtime.trace.state_labels``)."""
        return loop_text(self.fn, s)

    def numbered(self, s: ir.For) -> int | None:
        """The state number codegen gave this loop in a task's own word (None: none known)."""
        return self.internal.get(self.loop_text(s))

    def loop_state(self, s: ir.For, frontier: list[Place]) -> str:
        """A ``bulk for`` suspends its task until idle warps have run every chunk; a ``parallel
        for`` in a task hands its warp the loop (FORK) and is polled again after it."""
        node = f"{self.prefix}.{s.kind}{s.loop_id}"
        n = self.numbered(s)
        label = self.loop_text(s) if n is None else f"s{n} {self.loop_text(s)}"
        self.node(node, label, shape="box", style="rounded", tooltip=label)
        self.go(frontier, node)
        if s.kind == "bulk":
            self.edges.setdefault((node, node), []).append("pending")
        return node

    def await_point(self, s: ir.AwaitS | ir.Select | ir.ForAwait, frontier: list[Place]) -> str:
        node = f"{self.prefix}.s{s.site}"
        self.node(node, site_label(s), shape="box", style="rounded", tooltip=site_label(s))
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
    plan: Plan, g: graphviz.Digraph, prefix: str, fn: Function, body: tuple[ir.Stmt, ...], internal: dict[str, int],
    unit: Unit,
) -> None:  # fmt: skip
    """Draw one state word into ``g`` and its async blocks as nested clusters, noting them in ``unit``."""
    m = _Machine(plan, g, prefix, fn, internal)
    unit.bottoms.append(m.draw(body))
    unit.labels += [label for _, label in m.nodes]
    unit.embeds += m.embeds
    for k, (node, block) in enumerate(m.blocks, 1):
        sub = f"{node}.blk{k}"
        with g.subgraph(name=f"cluster_{sub}") as c:
            title = f"async block at line {block.span.line}"
            c.attr(label=title, style="dashed", tooltip=title)
            _draw_machine(plan, c, sub, fn, block.body, {}, unit)
        g.edge(node, f"{sub}.start", label="drives async block", style="dashed", tooltip="drives async block")


def _title(plan: Plan, fn: Function, task: TaskDef | None) -> str:
    if task is None:
        head = f"async fn {fn.name}"
    else:
        head = f"task {task.name} x{task.count}" if task.var is not None else f"task {task.name}"
        grp = plan.group_of(task)
        if grp is not None:  # each instance pinned to a warp of its group instance's block
            mine = f"task {task.name} x{task.per_copy}" if task.var is not None else f"task {task.name}"
            head = f"{mine} of group {grp.name}" + (f" x{grp.count}" if grp.var is not None else "")
    if not fn.suspends:
        return f"{head}\\ninline: never suspends"
    return f"{head}  (frame {plan.frame(fn.name).bytes} bytes)"


def states_graph(plan: Plan, internal: tuple[tuple[str, int, str], ...] = ()) -> graphviz.Digraph:
    """Build the drawing; the caller renders or writes it. ``internal`` is ``Generated.internal_states``:
    with it, a task's bulk and parallel fors carry the state numbers a trace shows."""
    g = graphviz.Digraph(
        name="states",
        graph_attr={
            "compound": "true",
            "newrank": "true",
            "rankdir": "TB",
            "fontname": "Helvetica",
            "tooltip": "state machines",
        },
        node_attr={"fontname": "Helvetica", "fontsize": "11"},
        edge_attr={"fontname": "Helvetica", "fontsize": "9"},
    )
    # tasks in topological order, then the async fns callers first: an embed edge goes on in reading order
    fns = [(fn, None) for fn in reversed(plan.functions) if fn.kind == "async"]
    units: list[Unit] = []
    for fn, task in [(t.body, t) for t in plan.tasks] + fns:
        title = _title(plan, fn, task)
        if not fn.suspends:
            g.node(f"{fn.name}.inline", title, shape="note", tooltip=tip(title))
            units.append(Unit(fn.name, f"{fn.name}.inline", title, [f"{fn.name}.inline"]))
            continue
        units.append(Unit(fn.name, f"{fn.name}.start", title))
        with g.subgraph(name=f"cluster_{fn.name}") as c:
            c.attr(label=title, labeljust="l", tooltip=tip(title))
            mine = {label.split(" ", 1)[1]: n for t, n, label in internal if task is not None and t == task.name}
            _draw_machine(plan, c, fn.name, fn, fn.body, mine, units[-1])
    g.node(
        "legend",
        r"legend\lsN: the state number a trace shows (gasync run --trace)\l"
        r"dotted self-loop: a poll that found the await pending\l"
        r"dashed: embeds a callee's frame, or drives an async block\l",
        shape="note",
        fontsize="9",
        tooltip="legend: state numbers, pending polls, embedded frames",
    )
    lay_out(g, units, "legend")
    for node, callee, n in (e for unit in units for e in unit.embeds):
        size = plan.frame(callee).bytes
        label = f"embeds frame ({size} bytes)" if n == 1 else f"embeds {n} frames ({size} bytes each)"
        g.edge(node, f"{callee}.start", label=label, style="dashed", lhead=f"cluster_{callee}", tooltip=label)
    return g


def states_graph_dot(plan: Plan, internal: tuple[tuple[str, int, str], ...] = ()) -> str:
    """The state machines as DOT source text."""
    return str(states_graph(plan, internal).source)
