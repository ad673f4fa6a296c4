"""The task graph of a Plan as a ``graphviz.Digraph`` (render returns DOT text).

One node per task; a task array is one node labelled with its instance count
(``worker x64``). ``after`` edges are solid, channel edges dashed and labelled
``name[capacity]``, signal edges dotted and labelled with the signal's name.
Nodes come in topological order and edges in the Plan's order, so the text is
deterministic.
"""

from __future__ import annotations

import graphviz

from gasync.planner.model import Plan, TaskDef


def _label(t: TaskDef) -> str:
    return f"{t.name} x{t.count}" if t.var is not None else t.name


def task_graph(plan: Plan) -> graphviz.Digraph:
    """Build the drawing; the caller renders or writes it."""
    g = graphviz.Digraph(name="tasks", graph_attr={"rankdir": "LR"}, node_attr={"shape": "box"})
    for t in plan.tasks:
        g.node(t.name, _label(t))
    for u, v in plan.edges:
        g.edge(u, v, style="solid")
    capacity = {c.name: c.capacity for c in plan.channels}
    for f in plan.flows:
        if f.kind == "channel":
            g.edge(f.src, f.dst, label=f"{f.name}[{capacity[f.name]}]", style="dashed")
        else:
            g.edge(f.src, f.dst, label=f.name, style="dotted")
    return g


def task_graph_dot(plan: Plan) -> str:
    """The task graph as DOT source text."""
    return str(task_graph(plan).source)
