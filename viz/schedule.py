"""A traced run's schedule as a Graphviz timeline: one row per executor.

Graphviz has no timeline layout, so this one pins every node: the graph says
``layout=neato`` and each node has ``pos="x,y!"`` in points
(``inputscale=72``), so neato keeps every position as given and draws no
edges. The DOT file renders the same with ``dot -Tsvg`` (the ``layout``
attribute picks neato) as through the Python package.

Rows: executor 0 at the top, a label column on the left, and a time axis
row of tick labels under the last executor (1-2-5 steps, about ten ticks),
and a legend row of the tasks' colours.
Each POLL is a box from its start to its end (at least ``MIN_W`` points
wide), coloured by task, drawn bold when the poll returned READY, labelled
with the instance and states when the label fits, and always with a tooltip.
Beyond ``MAX_BOXES`` polls, each executor's polls are merged into ``BINS``
bins of equal time width: one box per busy bin, labelled with its poll
count, coloured by the task with the most polls in it.
"""

from __future__ import annotations

import math
from collections import Counter

import graphviz

from gasync.runtime.trace import POLL, RawTrace, instance_name, state_name, task_of

WIDTH = 1200.0  # points for the whole run
ROW_H = 36.0
BOX_H = 26.0
MIN_W = 2.0
LABEL_X = -70.0
MAX_BOXES = 2000
BINS = 200
CHAR_W = 5.5  # points per character at fontsize 9
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9")


def schedule_graph(raw: RawTrace) -> graphviz.Digraph:
    """Build the timeline; the caller renders or writes it."""
    polls = sorted((e for e in raw.events if e[0] == POLL), key=lambda e: (e[1], e[5]))
    origin = raw.origin
    span = max([e[6] - origin for e in polls] + [1])
    scale = WIDTH / span
    dropped = f", {raw.dropped} events dropped (buffer of {raw.capacity})" if raw.dropped else ""
    title = f"schedule: {len(polls)} polls on {raw.executors} executors ({raw.backend}){dropped}"
    g = graphviz.Digraph(
        name="schedule",
        graph_attr={"layout": "neato", "inputscale": "72", "label": title, "labelloc": "t", "fontname": "Helvetica"},
        node_attr={"shape": "box", "style": "filled", "fontname": "Helvetica", "fontsize": "9", "fixedsize": "true"},
    )
    for w in range(raw.executors):
        _node(g, f"e{w}", f"executor {w}", LABEL_X, _y(w), 110.0, style="", shape="plaintext")
    colors = {name: PALETTE[k % len(PALETTE)] for k, (name, _, _) in enumerate(raw.tasks)}
    if len(polls) <= MAX_BOXES:
        _boxes(g, raw, polls, origin, scale, colors)
    else:
        _bins(g, raw, polls, origin, span, colors)
    _axis(g, span, scale, _y(raw.executors))
    for k, (name, color) in enumerate(colors.items()):
        _node(g, f"task{k}", name, k * 100.0 + 45.0, _y(raw.executors + 1), 90.0, fillcolor=color)
    return g


def schedule_dot(raw: RawTrace) -> str:
    """The timeline as DOT source text."""
    return str(schedule_graph(raw).source)


def _y(row: int) -> float:
    return -row * ROW_H


def _node(g: graphviz.Digraph, name: str, label: str, x: float, y: float, w: float, **attrs: str) -> None:
    g.node(name, label, pos=f"{x:.1f},{y:.1f}!", width=f"{w / 72:.3f}", height=f"{BOX_H / 72:.3f}", **attrs)


def _boxes(
    g: graphviz.Digraph, raw: RawTrace, polls: list[tuple[int, ...]], origin: int, scale: float, colors: dict[str, str]
) -> None:
    for k, (_, w, inst, a, b, t0, t1, c) in enumerate(polls):
        x0, x1 = (t0 - origin) * scale, (t1 - origin) * scale
        wid = max(MIN_W, x1 - x0)
        text = f"{instance_name(raw, inst)} {state_name(a)}→{state_name(b)}"
        tip = f"{text}{' (ready)' if c else ''}: {(t0 - origin) / 1e3:.3f}..{(t1 - origin) / 1e3:.3f} us"
        label = text if len(text) * CHAR_W < wid else ""
        color = colors.get(task_of(raw, inst) or "", PALETTE[-1])
        _node(g, f"p{k}", label, x0 + wid / 2, _y(w), wid, fillcolor=color, tooltip=tip, penwidth="2" if c else "1")


def _bins(
    g: graphviz.Digraph, raw: RawTrace, polls: list[tuple[int, ...]], origin: int, span: int, colors: dict[str, str]
) -> None:
    width = span / BINS
    counts: dict[tuple[int, int], Counter[str]] = {}
    busy: Counter[tuple[int, int]] = Counter()
    for _, w, inst, _, _, t0, t1, _ in polls:
        b = min(BINS - 1, int((t0 - origin) / width))
        counts.setdefault((w, b), Counter())[task_of(raw, inst) or "?"] += 1
        busy[(w, b)] += t1 - t0
    bw = WIDTH / BINS
    for (w, b), tasks in sorted(counts.items()):
        n = sum(tasks.values())
        top = tasks.most_common(1)[0][0]
        tip = f"{n} polls ({', '.join(f'{t} {m}' for t, m in sorted(tasks.items()))}), busy {busy[(w, b)] / width:.0%}"
        label = str(n) if len(str(n)) * CHAR_W < bw else ""
        _node(g, f"b{w}_{b}", label, (b + 0.5) * bw, _y(w), bw, fillcolor=colors.get(top, PALETTE[-1]), tooltip=tip)


def _axis(g: graphviz.Digraph, span: int, scale: float, y: float) -> None:
    """Tick labels every 1, 2 or 5 x 10^k ns, about ten across the run."""
    raw_step = span / 10
    mag = 10 ** math.floor(math.log10(raw_step)) if raw_step > 0 else 1
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw_step)
    _node(g, "axis", "time", LABEL_X, y, 110.0, style="", shape="plaintext")
    for k in range(int(span // step) + 1):
        t = k * step
        _node(g, f"t{k}", _time(t), t * scale, y, 60.0, style="", shape="plaintext")


def _time(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:g} us"
    return f"{ns:g} ns"
