"""What ``gasync run`` writes from a traced run: ``--trace``, ``--schedule`` and ``--report``."""

from __future__ import annotations

from pathlib import Path

import graphviz

from gasync.cli.drawings import emit_graph, graph_format, write_bytes
from gasync.cli.report import Reporter
from gasync.cli.source import Source
from gasync.planner.model import Plan
from gasync.runtime.options import Result
from gasync.runtime.trace import RawTrace
from gasync.viz.html_report import plain_task_svg, report_html
from gasync.viz.perfetto import chrome_trace_text
from gasync.viz.schedule import schedule_graph
from gasync.viz.taskgraph import task_graph


def write_traced(
    rep: Reporter, plan: Plan, result: Result, src: Source, trace: Path | None, schedule: Path | None,
    report: Path | None,
) -> None:  # fmt: skip
    """``--trace``: the Chrome trace JSON; ``--schedule``: the timeline, in the format of its suffix;
    ``--report``: the HTML page."""
    raw = result.trace
    if raw is None:
        raise RuntimeError("the run recorded no trace")
    _write_timeline(rep, raw, trace, schedule, "")
    if report is not None:
        page = report_html(plan, result, src.text(), src.label, graph_svg(plan))
        if write_bytes(rep, page.encode("utf-8"), report):
            rep.say(f"report in {report} (one self-contained page: open it in a browser)")


def write_stopped(rep: Reporter, raw: RawTrace, trace: Path | None, schedule: Path | None, report: Path | None) -> None:
    """A run that failed (a deadlock, a timeout, a bounds fault): its trace and timeline up to
    where it stopped, which show where its tasks waited; the report shows a finished run's results."""
    _write_timeline(rep, raw, trace, schedule, " up to where the run stopped")
    if report is not None:
        rep.say(f"no report in {report}: the run failed (--trace and --schedule show a failed run up to its stop)")


def _write_timeline(rep: Reporter, raw: RawTrace, trace: Path | None, schedule: Path | None, upto: str) -> None:
    if raw.dropped:
        rep.warn(
            f"the trace is incomplete: {raw.dropped} of {raw.dropped + raw.capacity} events were dropped, as the device"
            f" buffer holds {raw.capacity}; --trace-events {trace_room(raw.dropped + raw.capacity)} gives room for all"
        )
    if trace is not None and write_bytes(rep, chrome_trace_text(raw).encode("utf-8"), trace):
        events = f"{len(raw.events)} event" + ("" if len(raw.events) == 1 else "s")
        rep.say(f"trace of {events}{upto} in {trace} (open it in https://ui.perfetto.dev)")
    if schedule is not None:
        emit_graph(rep, schedule_graph(raw), graph_format(schedule, None, "--schedule"), schedule, f"schedule{upto}")


def trace_room(events: int) -> int:
    """A --trace-events that holds ``events`` and a quarter more (a run's count varies)."""
    return events + events // 4 + 1024


def graph_svg(plan: Plan) -> str:
    """The task graph as an inline ``<svg>`` element; a plain one where Graphviz's ``dot`` is missing."""
    try:
        svg = task_graph(plan).pipe(format="svg").decode("utf-8")
    except graphviz.ExecutableNotFound:
        return plain_task_svg(plan)
    return svg[svg.index("<svg") :]  # without the XML prolog and DOCTYPE, which HTML does not want
