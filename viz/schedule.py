"""A traced run's schedule as a Graphviz timeline: a lane per task, then a row per executor that polled.

Graphviz has no timeline layout, so this one pins every node: the graph says
``layout=neato`` and each node has ``pos="x,y!"`` in points
(``inputscale=72``), so neato keeps every position as given and draws no
edges. The DOT file renders the same with ``dot -Tsvg`` (the ``layout``
attribute picks neato) as through the Python package.

Rows, top to bottom: one lane per task (``worker x64``: all its instances'
polls), then one row per executor that polled (``executor 3``, numbered from
1 as in the Perfetto trace; executors that never polled are left out, and
beyond ``MAX_EXECUTOR_ROWS`` of them a note says how many more polled), a
time axis whose ticks all use one unit (ns, us, ms or s, from the run's
length; no tick finer than 1 ns), and a legend: each task's colour and what a
bold box means, wrapped into rows no wider than the run. A trace with no poll
says so where the axis would be. The row labels' column is as wide as the
longest label (up to ``MAX_LABEL`` characters; a longer name is cut with an
ellipsis and kept whole in its tooltip), so a long task name is never clipped.
Each POLL is a box from its start to its end (at least ``MIN_W`` points
wide), coloured by task, with a bold border when the poll returned READY
(boxes too thin for a border have none, so a run of short polls stays the
task's colour rather than black), labelled with the instance and states
when the label fits, and always with a tooltip. Beyond ``MAX_BOXES`` polls,
each row's polls are merged into ``BINS`` bins of equal time width: one box
per busy bin, labelled with its poll count, coloured by the task with the
most polls in it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import graphviz

from gasync.runtime.trace import POLL, Event, RawTrace, instance_name, state_name, task_of
from gasync.viz.perfetto import READY

WIDTH = 1200.0  # points for the whole run
ROW_H = 30.0
BOX_H = 22.0
MIN_W = 2.0
BORDER_MIN_W = 6.0  # boxes narrower than this get no border
LABEL_GAP = 15.0  # points between the row labels and the run's start
MIN_LABEL_W = 130.0
MAX_LABEL = 60  # characters of a row label
KEY_GAP = 8.0
MAX_BOXES = 2000
MAX_EXECUTOR_ROWS = 32
BINS = 200
CHAR_W = 5.5  # points per character at fontsize 9
# what Graphviz counts a digit of a fixed-size node's label at fontsize 9 (6 points, and 1 more a
# label; dot 2.43, Helvetica drawn as Liberation Sans): a bin's count wider than its box is "too
# small for label", a warning on stderr per bin
DIGIT_W = 6.0
PALETTE = ("#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5", "#bc80bd", "#ffed6f")
UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "us"), (1.0, "ns"))

Row = Callable[[Event], int | None]  # the row a poll is drawn in (None: not in this set of rows)


def schedule_graph(raw: RawTrace) -> graphviz.Digraph:
    """Build the timeline; the caller renders or writes it."""
    polls = sorted((e for e in raw.events if e[0] == POLL), key=lambda e: (e[5], e[1]))
    origin = raw.origin
    span = max([e[6] - origin for e in polls] + [1])
    scale = WIDTH / span
    executors = sorted({e[1] for e in polls})
    shown = executors[:MAX_EXECUTOR_ROWS]
    dropped = f", {raw.dropped} events dropped (buffer of {raw.capacity})" if raw.dropped else ""
    title = f"schedule: {len(polls)} polls on {len(executors)} of {raw.executors} executors ({raw.backend}){dropped}"
    g = graphviz.Digraph(
        name="schedule",
        graph_attr={"layout": "neato", "inputscale": "72", "label": title, "labelloc": "t", "fontname": "Helvetica"}
        | {"pad": "0.2"},  # room past the last box
        node_attr={"shape": "box", "style": "filled", "fontname": "Helvetica", "fontsize": "9", "fixedsize": "true"},
    )
    tasks = {name: k for k, (name, _, _) in enumerate(raw.tasks)}
    colors = {name: PALETTE[k % len(PALETTE)] for name, k in tasks.items()}
    row_of_exec = {w: len(tasks) + k for k, w in enumerate(shown)}
    group_of = {t: f" in {g}" for t, g, _, _ in raw.groups}  # a group's task: its lane says which group
    labels = [(f"task{tasks[n]}", _lane(n, count) + group_of.get(n, "")) for n, _, count in raw.tasks]
    labels += [(f"e{w}", f"executor {w + 1}") for w in row_of_exec]
    column = _Column(max([MIN_LABEL_W] + [min(len(text), MAX_LABEL) * CHAR_W + 12 for _, text in labels]))
    for row, (name, text) in enumerate(labels):
        column.label(g, name, text, _y(row))
    rows: list[tuple[str, Row]] = [
        ("t", lambda e: tasks.get(task_of(raw, e[2]) or "")),
        ("e", lambda e: row_of_exec.get(e[1])),
    ]
    for prefix, row in rows:
        if len(polls) <= MAX_BOXES:
            _boxes(g, raw, polls, origin, scale, colors, prefix, row)
        else:
            _bins(g, raw, polls, origin, span, colors, prefix, row)
    below = len(tasks) + len(shown)
    if len(executors) > len(shown):
        more = f"{len(executors) - len(shown)} more executors polled (their rows are left out)"
        _node(g, "more", more, WIDTH / 2, _y(below), WIDTH, style="", shape="plaintext")
        below += 1
    if polls:
        _axis(g, column, span, scale, _y(below))
    else:
        column.label(g, "axis", "time", _y(below))
        _node(g, "none", "no polls were recorded", WIDTH / 2, _y(below), WIDTH, style="", shape="plaintext")
    _legend(g, column, colors, below + 1)
    return g


def schedule_dot(raw: RawTrace) -> str:
    """The timeline as DOT source text."""
    return str(schedule_graph(raw).source)


def _y(row: int) -> float:
    return -row * ROW_H


def _node(g: graphviz.Digraph, name: str, label: str, x: float, y: float, w: float, **attrs: str) -> None:
    g.node(name, label, pos=f"{x:.1f},{y:.1f}!", width=f"{w / 72:.3f}", height=f"{BOX_H / 72:.3f}", **attrs)


class _Column:
    """The row labels' column, left of the run's start, ``width`` points wide."""

    def __init__(self, width: float) -> None:
        self.width = width

    def label(self, g: graphviz.Digraph, name: str, text: str, y: float) -> None:
        shown = text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"
        x = -LABEL_GAP - self.width / 2
        _node(g, name, shown, x, y, self.width, style="", shape="plaintext", tooltip=text)


def _boxes(
    g: graphviz.Digraph, raw: RawTrace, polls: list[Event], origin: int, scale: float, colors: dict[str, str],
    prefix: str, row: Row,
) -> None:  # fmt: skip
    for k, e in enumerate(polls):
        r = row(e)
        if r is None:
            continue
        _, w, inst, a, b, t0, t1, c = e
        x0, x1 = (t0 - origin) * scale, (t1 - origin) * scale
        wid = max(MIN_W, x1 - x0)
        text = f"{instance_name(raw, inst)} {state_name(a)}→{state_name(b)}"
        span = f"{_time(t0 - origin, _unit(t0 - origin))}..{_time(t1 - origin, _unit(t1 - origin))}"
        tip = f"{text}{' (ready)' if c == READY else ''}: {span} on executor {w + 1}"
        label = text if len(text) * CHAR_W < wid else ""
        color = colors.get(task_of(raw, inst) or "", PALETTE[-1])
        # only the finishing poll has a border: a thin one on the others read as bold when small
        pen = "2.5" if c == READY and wid >= BORDER_MIN_W else "0"
        _node(g, f"{prefix}p{k}", label, x0 + wid / 2, _y(r), wid, fillcolor=color, tooltip=tip, penwidth=pen)


def _bins(
    g: graphviz.Digraph, raw: RawTrace, polls: list[Event], origin: int, span: int, colors: dict[str, str],
    prefix: str, row: Row,
) -> None:  # fmt: skip
    width = span / BINS
    counts: dict[tuple[int, int], Counter[str]] = {}
    busy: Counter[tuple[int, int]] = Counter()
    for e in polls:
        r = row(e)
        if r is None:
            continue
        b = min(BINS - 1, int((e[5] - origin) / width))
        counts.setdefault((r, b), Counter())[task_of(raw, e[2]) or "?"] += 1
        busy[(r, b)] += e[6] - e[5]
    bw = WIDTH / BINS
    for (r, b), tasks in sorted(counts.items()):
        n = sum(tasks.values())
        top = tasks.most_common(1)[0][0]
        tip = f"{n} polls ({', '.join(f'{t} {m}' for t, m in sorted(tasks.items()))}), busy {busy[(r, b)] / width:.0%}"
        label = str(n) if len(str(n)) * DIGIT_W + 1 <= bw else ""
        color = colors.get(top, PALETTE[-1])
        _node(g, f"{prefix}b{r}_{b}", label, (b + 0.5) * bw, _y(r), bw, fillcolor=color, tooltip=tip, penwidth="0")


def _unit(ns: float) -> tuple[float, str]:
    return next(((d, u) for d, u in UNITS if ns >= d), UNITS[-1])


def _time(ns: float, unit: tuple[float, str]) -> str:
    return f"{ns / unit[0]:g} {unit[1]}"


def _axis(g: graphviz.Digraph, column: _Column, span: int, scale: float, y: float) -> None:
    """Tick labels every 1, 2 or 5 x 10^k ns (k >= 0), about ten across the run, all in the unit of the
    run's length."""
    raw_step = span / 10
    mag = 10 ** math.floor(math.log10(raw_step)) if raw_step >= 1 else 1
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw_step)
    unit = _unit(span)
    column.label(g, "axis", "time", y)
    for k in range(int(span // step) + 1):
        t = k * step
        _node(g, f"t{k}", _time(t, unit), t * scale, y, 60.0, style="", shape="plaintext")


def _legend(g: graphviz.Digraph, column: _Column, colors: dict[str, str], row: int) -> None:
    """The tasks' colours, and what a bold border means, in rows no wider than the run."""
    column.label(g, "legend", "legend", _y(row))
    keys = [(f"key{k}", name, max(60.0, min(len(name), MAX_LABEL) * CHAR_W + 16), color)
            for k, (name, color) in enumerate(colors.items())]  # fmt: skip
    keys.append(("key_ready", "bold border: the poll that finished its instance", 250.0, "white"))
    x = 0.0
    for name, text, w, color in keys:
        if x > 0 and x + w > WIDTH:
            row, x = row + 1, 0.0
        shown = text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"
        pen = "2.5" if name == "key_ready" else "0.5"
        _node(g, name, shown, x + w / 2, _y(row), w, fillcolor=color, penwidth=pen, tooltip=text)
        x += w + KEY_GAP


def _lane(name: str, count: int) -> str:
    return name if count == 1 else f"{name} x{count}"
