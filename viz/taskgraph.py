"""The task graph of a Plan as a ``graphviz.Digraph`` (render returns DOT text).

Nodes: one box per task (a task array is one node labelled with its instance
count, ``worker x64``), and one node per object the tasks share, each shaped
by its kind: a buffer is a cylinder (``x: f64[4098]``), a shared scalar an
ellipse, a signal a diamond (drawn double, and labelled ``set by the host``,
when no task sets it: only ``--signal`` can), a channel a parallelogram
(``work: i32[4]``). Edges: ``after`` edges are bold; an edge from a task to
an object is a write (a store, an atomic update, a send, a set, a close), an
edge from an object to a task a read (a load, a receive, a wait or
``is_set``), both thin and grey-blue; an object with no task using it is
still drawn; a task that reads and writes one object has one edge with two
heads. A legend cluster shows each kind of node the drawing has, once. Every node and label uses
one font. Nodes come in the plan's order (tasks topologically, then buffers,
shared scalars, signals and channels as declared) and edges in a fixed
order, so the text is deterministic. A group is a cluster of its tasks and its
local buffers and channels, labelled with its instances, warps and shared memory.
"""

from __future__ import annotations

import graphviz

from gasync.planner.effects import Effects, host_set_signals, task_effects
from gasync.planner.model import GroupDef, Plan, TaskDef
from gasync.planner.printer import each, group_warps

FONT = "Helvetica"
USE = "#4a6fa5"  # the colour of read and write edges
SHAPES = {"buffer": "cylinder", "shared": "ellipse", "signal": "diamond", "channel": "parallelogram"}


def _label(t: TaskDef) -> str:
    return f"{t.name} x{t.count}" if t.var is not None else t.name


def _objects(plan: Plan) -> list[tuple[str, str, str]]:
    """(kind, name, label) for every shared object, in declaration order per kind."""
    out = [("buffer", b.name, f"{b.name}: {b.elem}[{', '.join(map(str, b.shape))}]") for b in plan.buffers]
    out += [("shared", s.name, f"{s.name}: {s.ty}") for s in plan.shared]
    out += [("signal", s.name, s.name) for s in plan.signals]
    out += [("channel", c.name, f"{c.name}: {c.elem}[{c.capacity}]") for c in plan.channels]
    return out


def _uses(e: Effects) -> list[tuple[str, str, str]]:
    """(kind, name, 'reads' | 'writes') for what one task does, in a fixed order."""
    pairs = [
        ("buffer", e.reads, "reads"), ("buffer", set(e.writes) | e.updates, "writes"),
        ("shared", e.shared_reads, "reads"), ("shared", e.shared_writes, "writes"),
        ("signal", e.waits, "reads"), ("signal", e.sets, "writes"),
        ("channel", e.recvs, "reads"), ("channel", e.sends | e.closes, "writes"),
    ]  # fmt: skip
    return [(kind, name, how) for kind, names, how in pairs for name in sorted(names)]


def tip(label: str) -> str:
    """A node's label as its hover text (not Graphviz's default, the node's internal id)."""
    return label.replace("\\n", " ").replace("\\l", " ").strip()


def task_graph(plan: Plan) -> graphviz.Digraph:
    """Build the drawing; the caller renders or writes it."""
    g = graphviz.Digraph(
        name="tasks",
        graph_attr={"rankdir": "LR", "fontname": FONT, "tooltip": "task graph"},
        node_attr={"shape": "box", "fontname": FONT, "fontsize": "11"},
        edge_attr={"fontname": FONT, "fontsize": "9"},
    )
    effects = task_effects(plan)
    host_set = host_set_signals(plan, effects)
    grouped = {name for grp in plan.groups for name in grp.tasks}
    for t in plan.tasks:
        if t.name not in grouped:
            g.node(f"task.{t.name}", _label(t), style="rounded,filled", fillcolor="#eef3fb", tooltip=tip(_label(t)))
    for grp in plan.groups:
        _group(g, plan, grp)
    for kind, name, label in _objects(plan):
        attrs = {"shape": SHAPES[kind]}
        if kind == "signal" and name in host_set:
            attrs |= {"peripheries": "2"}
            label += "\\nset by the host"
        g.node(f"{kind}.{name}", label, tooltip=tip(f"{kind} {label}"), **attrs)
    for u, v in plan.edges:
        g.edge(f"task.{u}", f"task.{v}", penwidth="2", label="after", tooltip=f"{v} runs after {u}")
    for t in plan.tasks:
        uses = _uses(effects[t.name])
        for kind, name, how in uses:
            task, obj = f"task.{t.name}", f"{kind}.{name}"
            both = {(kind, name, "reads"), (kind, name, "writes")} <= set(uses)
            if both and how == "reads":
                continue  # one edge with two heads
            src, dst = (task, obj) if how == "writes" else (obj, task)
            shown = name.split(".", 1)[-1]  # a group's local as written
            what = f"{t.name} reads and writes {shown}" if both else f"{t.name} {how} {shown}"
            g.edge(src, dst, color=USE, arrowsize="0.7", tooltip=what, **({"dir": "both"} if both else {}))
    local = {"buffer" for grp in plan.groups if grp.buffers} | {"channel" for grp in plan.groups if grp.channels}
    _legend(g, {kind for kind, _, _ in _objects(plan)} | local, bool(host_set))
    return g


def _group(g: graphviz.Digraph, plan: Plan, grp: GroupDef) -> None:
    """A group is a cluster: its tasks (each labelled with its instances in one group
    instance) and its local buffers and channels, which nothing outside it uses."""
    head = f"group {grp.name} x{grp.count}" if grp.var is not None else f"group {grp.name}"
    label = f"{head}: {group_warps(grp)}, {grp.shared_bytes} bytes of shared memory{each(grp)}"
    tasks = {t.name: t for t in plan.tasks}
    with g.subgraph(name=f"cluster_group_{grp.name}") as c:
        c.attr(label=label, fontname=FONT, fontsize="10", style="rounded", color="#7a8fb0", tooltip=label)
        for name in grp.tasks:
            t = tasks[name]
            text = f"{t.name} x{t.per_copy}" if t.var is not None else t.name
            c.node(
                f"task.{t.name}",
                text,
                style="rounded,filled",
                fillcolor="#eef3fb",
                tooltip=f"{text} in group {grp.name}",
            )
        for b in grp.buffers:
            dims = ", ".join(map(str, b.shape))
            text = f"local {b.name.split('.', 1)[1]}: {b.elem}[{dims}]"
            c.node(f"buffer.{b.name}", text, shape=SHAPES["buffer"], tooltip=f"{text} in group {grp.name}")
        for ch in grp.channels:
            text = f"local {ch.name.split('.', 1)[1]}: {ch.elem}[{ch.capacity}]"
            c.node(f"channel.{ch.name}", text, shape=SHAPES["channel"], tooltip=f"{text} in group {grp.name}")


def _legend(g: graphviz.Digraph, kinds: set[str], host_set: bool) -> None:
    """The kinds of node this drawing has, in a row (chained by invisible edges)."""
    with g.subgraph(name="cluster_legend") as c:
        c.attr(label="legend", fontname=FONT, fontsize="10", style="dashed", tooltip="legend")
        names = ["legend.task"]
        c.node("legend.task", "task (x N: an array)", style="rounded,filled", fillcolor="#eef3fb", fontsize="9",
               tooltip="task (x N: an array)")  # fmt: skip
        for kind, shape in SHAPES.items():
            if kind in kinds:
                names.append(f"legend.{kind}")
                text = {"shared": "shared scalar"}.get(kind, kind)
                c.node(names[-1], text, shape=shape, fontsize="9", tooltip=text)
        if host_set:
            names.append("legend.host")
            text = "signal set by the host"
            c.node(names[-1], text, shape="diamond", peripheries="2", fontsize="9", tooltip=text)
        names.append("legend.note")
        c.node(names[-1], "bold edge: after\\lthin: task -> it writes, it -> task reads\\l", shape="plaintext",
               fontsize="9", tooltip="bold edge: after; thin: task -> it writes, it -> task reads")  # fmt: skip
        for u, v in zip(names, names[1:], strict=False):
            c.edge(u, v, style="invis")


def task_graph_dot(plan: Plan) -> str:
    """The task graph as DOT source text."""
    return str(task_graph(plan).source)
