"""A traced run as one self-contained HTML page (``gasync run --report r.html``).

The page holds, in this order: a heading with the program and the backend,
the run's stats, the profile table (``runtime/profile.py``), what each task
waited on, the counters' peaks (the run queue, in flight, each channel), the
timeline (one lane per task, a box per poll, drawn on a canvas by
``timeline.js`` from the polls embedded as JSON; zoom, pan and hover), the
task graph as inline SVG, the buffers and shared scalars, and the program
text with line numbers. Nothing is loaded from the network: the script, the
style and the data are inline, so the file can be mailed or archived.

:func:`report_html` only returns text; the caller renders the task graph's
SVG (that needs Graphviz's ``dot``) and writes the file.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

import numpy as np

from gasync.planner.model import Plan
from gasync.runtime.options import Result
from gasync.runtime.profile import COLUMNS, duration, peaks
from gasync.runtime.trace import RawTrace, instance_name
from gasync.viz.perfetto import READY

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f2f2f2; } td:first-child, th:first-child { text-align: left; }
td.text { text-align: left; font-family: monospace; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
.graph svg { max-width: 100%; height: auto; }
#timeline { border: 1px solid #ccc; cursor: crosshair; }
#timeline-tip { position: absolute; display: none; background: #ffe; border: 1px solid #999;
  padding: 3px 6px; font-size: 0.85em; white-space: pre; pointer-events: none; }
.note { color: #666; font-size: 0.85em; }
"""


def report_html(plan: Plan, result: Result, source: str, title: str, graph_svg: str) -> str:
    """The page; ``graph_svg`` is the task graph as an ``<svg>`` element (rendered by the caller)."""
    raw: RawTrace = result.trace
    if raw is None:
        raise ValueError("a report needs a traced run")
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>gasync report: {html.escape(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>gasync report: {html.escape(title)}</h1>",
        f'<p class="note">backend {html.escape(str(result.stats.get("backend")))}, '
        f"{len(raw.events)} events recorded{_dropped(raw)}</p>",
        "<h2>Stats</h2>",
        _table(("stat", "value"), [(k, _text(v)) for k, v in result.stats.items()]),
        "<h2>Profile</h2>",
        _profile(result),
        _peaks(raw),
        "<h2>Timeline</h2>",
        '<p class="note">One lane per task, a box per poll (bold: the poll that finished an instance).'
        " Wheel: zoom; drag: pan; double-click: the whole run; hover: the poll."
        ' <span id="timeline-status">(the timeline needs JavaScript)</span></p>',
        '<div><canvas id="timeline"></canvas></div><div id="timeline-tip"></div>',
        "<h2>Task graph</h2>",
        f'<div class="graph">{graph_svg}</div>',
        "<h2>Buffers and shared scalars</h2>",
        _values(result),
        "<h2>Program</h2>",
        f"<pre>{_numbered(source)}</pre>",
        f'<script type="application/json" id="gasync-data">{_data(plan, raw)}</script>',
        f"<script>{resources.files('gasync.viz').joinpath('timeline.js').read_text(encoding='utf-8')}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _dropped(raw: RawTrace) -> str:
    return f", {raw.dropped} dropped (the device buffer holds {raw.capacity})" if raw.dropped else ""


def _text(v: Any) -> str:
    if isinstance(v, float | np.floating):
        return f"{float(v):.6g}"
    return str(v)


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]], text_cols: tuple[int, ...] = ()) -> str:
    th = "".join(
        f'<th style="text-align: left">{html.escape(h)}</th>' if k in text_cols else f"<th>{html.escape(h)}</th>"
        for k, h in enumerate(head)
    )
    body = "".join(
        "<tr>" + "".join(
            f'<td class="text">{html.escape(c)}</td>' if k in text_cols else f"<td>{html.escape(c)}</td>"
            for k, c in enumerate(row)
        ) + "</tr>"
        for row in rows
    )  # fmt: skip
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _profile(result: Result) -> str:
    prof = result.profile or {}
    rows = [
        (task, str(p.instances), str(p.polls), duration(p.busy_us), duration(p.wait_us), str(p.wakes),
         duration(p.longest_poll_us))
        for task, p in prof.items()
    ]  # fmt: skip
    waits = [(task, label, duration(us)) for task, p in prof.items() for label, us in p.waiting_on.items()]
    return _table(COLUMNS, rows) + "<h2>Waiting on</h2>" + _table(("task", "await point", "time"), waits, (1,))


def _peaks(raw: RawTrace) -> str:
    top = peaks(raw)
    if not top:
        return ""
    rows = [(name, str(peak), "" if cap is None else str(cap)) for name, (peak, cap) in top.items()]
    note = '<p class="note">The largest value each counter had as a poll ended.</p>'
    return "<h2>Counters</h2>" + note + _table(("counter", "peak", "capacity"), rows)


def _values(result: Result) -> str:
    rows = []
    for name, arr in result.buffers.items():
        flat = np.asarray(arr).reshape(-1)
        first = ", ".join(_text(v) for v in flat[:8]) + (", ..." if flat.size > 8 else "")
        rows.append((f"buffer {name}", f"{list(np.shape(arr))} {np.asarray(arr).dtype}", first))
    rows += [(f"shared {name}", "", _text(v)) for name, v in result.shared.items()]
    rows += [(f"signal {name}", "", "set" if v else "not set") for name, v in result.signals.items()]
    return _table(("name", "shape", "values"), rows, (2,))


def _numbered(source: str) -> str:
    lines = source.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{k:>{width}}  {html.escape(line)}" for k, line in enumerate(lines, 1))


def _data(plan: Plan, raw: RawTrace) -> str:
    """The polls for timeline.js: ``[task, instance in task, t0, t1, from, to, executor, ready]``, ns from the start;
    a group's task carries its instances' names (``compute[1] in pipe[2]``, as traces and errors name them)."""
    origin = raw.origin
    index = {name: k for k, (name, _, _) in enumerate(raw.tasks)}
    firsts = [(first, count, index[name]) for name, first, count in raw.tasks]
    polls = []
    for _, w, inst, a, b, t0, t1, c in raw.polls():
        task = next((k, inst - first) for first, count, k in firsts if first <= inst < first + count)
        polls.append([task[0], task[1], t0 - origin, t1 - origin, a, b, w + 1, int(c == READY)])
    tasks: list[dict[str, Any]] = [
        {"name": t.name, "count": t.count, "label": f"{t.name} x{t.count}" if t.var is not None else t.name}
        for t in plan.tasks
    ]
    grouped = {t for t, _, _, _ in raw.groups}
    spans = {name: (first, count) for name, first, count in raw.tasks}
    for entry in tasks:
        if entry["name"] in grouped:
            first, count = spans[entry["name"]]
            entry["names"] = [instance_name(raw, first + k) for k in range(count)]
    doc = {
        "tasks": tasks,
        "states": {t: {str(k): v for k, v in s.items()} for t, s in raw.states.items()},
        "polls": polls,
        "span": max((p[3] for p in polls), default=1),
    }
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def plain_task_svg(plan: Plan) -> str:
    """The tasks as a row of boxes, for a page made where Graphviz's ``dot`` is missing."""
    boxes = []
    for k, t in enumerate(plan.tasks):
        label = html.escape(f"{t.name} x{t.count}" if t.var is not None else t.name)
        boxes.append(
            f'<rect x="{10 + k * 150}" y="10" width="140" height="30" fill="#eef" stroke="#333"/>'
            f'<text x="{80 + k * 150}" y="30" text-anchor="middle" font-size="12">{label}</text>'
        )
    width = 20 + 150 * max(1, len(plan.tasks))
    note = '<text x="10" y="60" font-size="11">(install Graphviz\'s dot for the full graph)</text>'
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="70">{"".join(boxes)}{note}</svg>'


def svg_page(title: str, svg: str) -> str:
    """A drawing as an HTML page of its own (``-o x.html``): the SVG inline, nothing else."""
    svg = svg[svg.index("<svg") :]  # without the XML prolog and DOCTYPE
    head = f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
    return f"{head}<style>{STYLE}</style></head><body>\n{svg}\n</body></html>\n"
