"""Traces without a GPU: a synthetic RawTrace drawn as Chrome trace JSON and as a
schedule timeline; state labels and instance names from a real plan."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from gasync import pipeline
from gasync.runtime.trace import POLL, WAKE, RawTrace, TraceFileError, instance_name, state_labels
from gasync.viz.perfetto import MAX_LANES, chrome_trace_text, from_chrome_trace, to_chrome_trace
from gasync.viz.schedule import (
    CHAR_W,
    MAX_BOXES,
    MAX_EXECUTOR_ROWS,
    MAX_LABEL,
    ROW_H,
    WIDTH,
    schedule_dot,
    schedule_graph,
)

SAMPLES = Path(__file__).parents[2] / "samples"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's 'dot' is not installed (run 'make dot')")
STATES = {"worker": {0: "start", 1: "s1 line 3: yield_now()", -1: "done"}, "boss": {0: "start", -1: "done"}}


def synthetic(rounds: int = 4, executors: int = 2, t0: int = 5_000_000) -> RawTrace:
    """``boss`` (instance 0) once, then workers 1..executors each polled ``rounds`` times,
    each poll waking the other worker; the host wakes worker[0] once; a timer wakes one."""
    events: list[tuple[int, int, int, int, int, int, int, int]] = [(POLL, 0, 0, 0, -1, t0, t0 + 300, 1)]
    t = t0 + 1000
    for r in range(rounds):
        last = r == rounds - 1
        for w in range(executors):
            inst = 1 + w
            events.append((POLL, w, inst, 0 if r == 0 else 1, -1 if last else 1, t, t + 700, int(last)))
            if not last:
                other = 1 + (w + 1) % executors
                events.append((WAKE, w, other, inst, 0, t + 400, t + 400, 0))
            t += 1000
    events.append((WAKE, -1, 1, -1, 0, t0 + 500, t0 + 500, 0))
    events.append((WAKE, 1, 2, -1, 0, t0 + 600, t0 + 600, 0))
    events.sort(key=lambda e: e[5])
    return RawTrace(events, 3, 1 << 10, [("boss", 0, 1), ("worker", 1, executors)], STATES, executors, "sim")


def test_instance_names() -> None:
    raw = synthetic()
    assert instance_name(raw, 0) == "boss"
    assert instance_name(raw, 2) == "worker[1]"
    assert instance_name(raw, 99) == "#99"


def test_state_labels_of_a_sample() -> None:
    labels = state_labels(pipeline.check(SAMPLES / "join_select.gasync"))
    assert labels["main"] == {
        0: "start",
        1: "s1 line 31: square(...)",
        2: "s2 line 32: join(square(...), square(...))",
        4: "s4 line 34: async { ... }",
        -1: "done",
    }
    assert labels["consumer"][1] == "s1 line 51: select { work.recv() | sleep(...) }"


def _doc(raw: RawTrace) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(chrome_trace_text(raw))  # plain JSON all the way down
    return doc


def _threads(doc: dict[str, Any]) -> dict[tuple[int, int], str]:
    return {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in doc["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


def _processes(doc: dict[str, Any]) -> dict[str, int]:
    return {e["args"]["name"]: e["pid"] for e in doc["traceEvents"] if e["name"] == "process_name"}


def _shown(doc: dict[str, Any], process: str) -> list[str]:
    """A process's track titles as the Perfetto UI shows them: the thread's name, a space and its
    tid (``getTrackName``), in tid order."""
    pid = _processes(doc)[process]
    return [f"{name} {tid}" for (p, tid), name in sorted(_threads(doc).items()) if p == pid]


def test_executor_tracks_are_numbered_from_1_and_no_slice_is_on_tid_0() -> None:
    doc = _doc(synthetic())
    assert _shown(doc, "executors (sim)") == ["executor 1", "executor 2", "host 3"]  # not "executor 1 1"
    slices = [e for e in doc["traceEvents"] if e["ph"] in "XsfC" and e["ph"] != "C"]
    assert slices and all(e["tid"] != 0 for e in slices)
    assert all(e["tid"] != e["pid"] for e in slices)  # Perfetto would call it "main thread"
    tids = [tid for _, tid in _threads(doc)]
    assert len(tids) == len(set(tids))  # unique across processes


def test_only_executors_that_polled_have_tracks() -> None:
    raw = synthetic()
    raw = RawTrace(raw.events, 0, raw.capacity, raw.tasks, raw.states, 4000, raw.backend)  # 3,998 never polled
    doc = _doc(raw)
    names = sorted(_threads(doc).values())
    assert names == ["executor", "executor", "host", "task boss", "task worker (lane 2)", "task worker[0..2]"]
    metadata = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert len(metadata) == 4 + 6  # a name and a sort index per process, a name per track
    assert doc["otherData"]["executors_that_polled"] == 2


def test_the_file_is_real_utf8() -> None:
    text = chrome_trace_text(synthetic())
    assert "\\u" not in text
    assert "worker[0] start→s1" in text


def test_a_slice_per_poll_on_the_executor_tracks() -> None:
    raw = synthetic()
    doc = _doc(raw)
    execs = _processes(doc)["executors (sim)"]
    polls = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "poll" and e["pid"] == execs]
    assert len(polls) == len(raw.polls())
    for e in polls:
        assert {"ts", "dur", "pid", "tid", "name"} <= e.keys()
        assert isinstance(e["ts"], float) and e["dur"] >= 0
    assert min(e["ts"] for e in polls) == 0.0
    first = next(e for e in polls if e["name"] == "worker[0] start→s1")
    assert first["tid"] == 1
    assert first["args"] == {
        "instance": 1,
        "state_before": "start",
        "state_after": "s1 line 3: yield_now()",
        "ready": False,
    }
    assert any(e["name"] == "worker[1] s1→done" and e["args"]["ready"] for e in polls)
    assert doc["otherData"]["events_dropped"] == 3


def test_a_track_per_task_with_instances_as_slices_and_polls_inside() -> None:
    raw = synthetic(rounds=4, executors=2)
    doc = _doc(raw)
    tasks = _processes(doc)["tasks (sim)"]
    tracks = {tid: name for (pid, tid), name in _threads(doc).items() if pid == tasks}
    # the two workers overlap in time: the array takes two lanes
    assert sorted(tracks.values()) == ["task boss", "task worker (lane 2)", "task worker[0..2]"]
    by_name = {name: tid for tid, name in tracks.items()}
    events = [e for e in doc["traceEvents"] if e.get("pid") == tasks and e["ph"] == "X"]
    inst = {e["name"]: e for e in events if e["cat"] == "instance"}
    assert set(inst) == {"boss", "worker[0]", "worker[1]"}
    assert inst["boss"]["tid"] == by_name["task boss"]
    assert {inst["worker[0]"]["tid"], inst["worker[1]"]["tid"]} == {
        by_name["task worker[0..2]"],
        by_name["task worker (lane 2)"],
    }
    assert inst["worker[0]"]["args"] == {"instance": 1, "polls": 4, "executors": [1]}
    for e in events:  # each poll lies inside its instance's slice, on its track
        if e["cat"] == "poll":
            owner = next(i for i in inst.values() if i["tid"] == e["tid"] and i["ts"] <= e["ts"])
            assert e["ts"] + e["dur"] <= owner["ts"] + owner["dur"] + 1e-9
    assert len([e for e in events if e["cat"] == "poll"]) == len(raw.polls())


def test_track_titles_name_the_instances_and_end_in_no_digit() -> None:
    """Perfetto adds the tid to a thread's name and the pid to a process's: a name that ended in a
    number would run into it (``executor 1 1``, ``task compute x12 7``)."""
    events = [(POLL, w, w, 0, -1, 1000, 2000 + w, 1) for w in range(4 + 12)]  # all at once
    events.append((POLL, 0, 16, 0, -1, 3000, 3100, 1))
    tasks = [("loader", 0, 4), ("compute", 4, 12), ("report", 16, 1)]
    groups = [("loader", "pipe", 1, 2), ("compute", "pipe", 3, 2)]  # group pipe for g in 2..6
    raw = RawTrace(events, 0, 1 << 10, tasks, {}, 16, "sim", groups=groups)
    doc = _doc(raw)
    shown = _shown(doc, "tasks (sim)")  # all instances overlap: a lane each, then the report
    assert shown[:2] == ["task loader in pipe[2..6] 18", "task loader in pipe (lane 2) 19"]
    assert shown[4:6] == ["task compute[0..3] in pipe[2..6] 22", "task compute in pipe (lane 2) 23"]
    assert shown[15:] == ["task compute in pipe (lane 12) 33", "task report 34"]
    assert _shown(doc, "executors (sim)")[:2] == ["executor 1", "executor 2"]
    names = [e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and "name" in e["args"]]
    assert not [n for n in names if n[-1].isdigit()]
    slices = {e["name"] for e in doc["traceEvents"] if e.get("cat") == "instance"}
    assert {"loader in pipe[2]", "compute[2] in pipe[5]"} <= slices  # what the track titles' ranges hold


def test_a_group_without_a_range_is_named_without_an_index_as_errors_name_it() -> None:
    events = [(POLL, 0, k, 0, -1, 1000 * k, 1000 * k + 500, 1) for k in range(4)]
    tasks = [("lead", 0, 1), ("help", 1, 2), ("sink", 3, 1)]
    groups = [("lead", "solo", 1, 0), ("help", "solo", 2, 0), ("sink", "many", 1, 0)]  # `group solo { ... }`
    raw = RawTrace(events, 0, 1 << 10, tasks, {}, 1, "sim", groups=groups, unranged=["solo"])
    assert [instance_name(raw, k) for k in range(4)] == ["lead in solo", "help[0] in solo", "help[1] in solo",
                                                          "sink in many[0]"]  # fmt: skip
    titles = [re.sub(r" \d+$", "", t) for t in _shown(_doc(raw), "tasks (sim)")]  # less Perfetto's tid
    assert titles == ["task lead in solo", "task help[0..2] in solo", "task sink in many[0]"]
    again = RawTrace.from_json(json.loads(json.dumps(raw.to_json())))
    assert again.unranged == ["solo"] and instance_name(again, 2) == "help[1] in solo"
    older = raw.to_json()
    del older["unranged"]  # a trace written before the key was there: every group had an index
    assert instance_name(RawTrace.from_json(older), 0) == "lead in solo[0]"


def test_an_array_fills_at_most_max_lanes() -> None:
    n = MAX_LANES + 3
    events = [(POLL, w, w, 0, -1, 1000, 2000, 1) for w in range(n)]  # all at once
    raw = RawTrace(events, 0, 1 << 10, [("worker", 0, n)], {"worker": {0: "start", -1: "done"}}, n, "sim")
    doc = _doc(raw)
    lanes = [name for name in _threads(doc).values() if name.startswith("task worker")]
    assert len(lanes) == MAX_LANES
    assert doc["otherData"]["instances_not_on_task_tracks"] == 3


def test_counters_of_instances_alive_and_executors_polling() -> None:
    doc = _doc(synthetic())
    alive = [e["args"]["alive"] for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == "instances"]
    polling = [e["args"]["polling"] for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == "executors"]
    assert alive == [1, 0, 1, 2, 1, 0]  # the boss, then the two workers at once
    assert polling == [1, 0] * 9  # nine polls, none at once


def test_wakes_are_flows_that_pair_up() -> None:
    doc = _doc(synthetic())
    events = doc["traceEvents"]
    execs = _processes(doc)["executors (sim)"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and starts.keys() == ends.keys()
    polls = [e for e in events if e["ph"] == "X" and e["pid"] == execs]
    for k, s in starts.items():
        f = ends[k]
        assert f["ts"] >= s["ts"] and f["bp"] == "e"
        assert any(p["tid"] == f["tid"] and p["ts"] == f["ts"] for p in polls)  # bound to the next poll
        assert any(p["tid"] == s["tid"] and p["ts"] <= s["ts"] <= p["ts"] + p["dur"] for p in polls)
    assert any(s["tid"] == 3 and s["args"]["by"] == "the host" for s in starts.values())


def test_the_raw_trace_travels_in_the_json() -> None:
    raw = synthetic()
    assert from_chrome_trace(json.loads(json.dumps(to_chrome_trace(raw)))) == raw


@pytest.mark.parametrize("doc", [{}, {"otherData": {"gasync": {"version": 1}}}, [], {"otherData": {"gasync": 3}}])
def test_a_foreign_json_document_is_a_trace_file_error(doc: object) -> None:
    with pytest.raises(TraceFileError):
        from_chrome_trace(doc)


def _placed(dot: str, prefix: str) -> list[tuple[float, float]]:
    rows = re.findall(rf'\t{prefix}\d+ \[label="[^"]*" [^\]]*pos="([-\d.]+),([-\d.]+)!"', dot)
    return [(float(x), float(y)) for x, y in rows]


def test_schedule_has_a_lane_per_task_then_a_row_per_executor() -> None:
    raw = synthetic()
    dot = schedule_dot(raw)
    assert "layout=neato" in dot
    polls = sorted(raw.polls(), key=lambda e: (e[5], e[1]))
    lanes = _placed(dot, "tp")
    assert [y for _, y in lanes] == [-ROW_H * (0 if e[2] == 0 else 1) for e in polls]  # boss, then worker x2
    rows = _placed(dot, "ep")
    assert [y for _, y in rows] == [-ROW_H * (2 + e[1]) for e in polls]  # executor 1, executor 2
    assert [x for x, _ in rows] == sorted(x for x, _ in rows)  # in time order
    for label in ("boss", "worker x2", "executor 1", "executor 2", "legend"):
        assert re.search(rf'label="?{label}"? ', dot), label
    assert "bold border: the poll that finished its instance" in dot
    assert "3 events dropped" in dot
    assert schedule_dot(raw) == dot  # deterministic


def test_schedule_leaves_out_executors_that_never_polled() -> None:
    raw = synthetic()
    raw = RawTrace(raw.events, 0, raw.capacity, raw.tasks, raw.states, 32_767, raw.backend)
    dot = schedule_dot(raw)
    assert "executor 3" not in dot
    assert "9 polls on 2 of 32767 executors" in dot


def test_schedule_shows_at_most_max_executor_rows() -> None:
    n = MAX_EXECUTOR_ROWS + 5
    events = [(POLL, w, w, 0, -1, 1000 * w, 1000 * w + 500, 1) for w in range(n)]
    raw = RawTrace(events, 0, 1 << 10, [("worker", 0, n)], {"worker": {0: "start", -1: "done"}}, n, "cuda")
    dot = schedule_dot(raw)
    assert f'label="executor {MAX_EXECUTOR_ROWS}"' in dot and f'label="executor {MAX_EXECUTOR_ROWS + 1}"' not in dot
    assert "5 more executors polled (their rows are left out)" in dot


def test_schedule_ticks_use_one_unit() -> None:
    dot = schedule_dot(synthetic())  # 8.7 us long: ticks 0, 1, 2, ... us
    ticks = re.findall(r'\tt\d+ \[label="([^"]*)"', dot)
    assert ticks == [f"{k} us" for k in range(9)]


def test_thin_boxes_have_no_border() -> None:
    events = [(POLL, 0, 0, 0, 1, 0, 10, 0), (POLL, 0, 0, 1, -1, 999_990, 1_000_000, 1)]
    raw = RawTrace(events, 0, 1 << 10, [("t", 0, 1)], {"t": {0: "start", 1: "s1", -1: "done"}}, 1, "sim")
    pens = re.findall(r"\ttp\d+ \[[^\]]*penwidth=([\d.]+)", schedule_dot(raw))
    assert pens == ["0", "0"]  # 2-point slivers: the task's colour, not a black border


def test_a_long_schedule_is_binned() -> None:
    raw = synthetic(rounds=MAX_BOXES, executors=2, t0=0)
    dot = schedule_dot(raw)
    assert "\ttp0 " not in dot and "\tep0 " not in dot
    assert 0 < dot.count("\ttb") <= 2 * 200 and 0 < dot.count("\teb") <= 2 * 200
    assert "polls (" in dot  # tooltips count polls per bin


@needs_dot
def test_a_binned_schedule_renders_without_a_graphviz_warning() -> None:
    # a bin is 6 points wide: a count of 1 in it was "too small for label", once per bin
    raw = synthetic(rounds=MAX_BOXES, executors=2, t0=0)
    res = subprocess.run(["dot", "-Tsvg"], input=schedule_dot(raw), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "too small for label" not in res.stderr


@needs_dot
@pytest.mark.parametrize("rounds", [4, MAX_BOXES])
def test_schedule_renders_to_svg(rounds: int) -> None:
    svg = schedule_graph(synthetic(rounds=rounds)).pipe(format="svg").decode()
    ET.fromstring(svg)
    assert "executor 1" in svg and "worker x2" in svg and "legend" in svg


def test_an_executor_that_only_woke_a_task_has_a_named_track() -> None:
    events = [(POLL, 0, 0, 0, 1, 0, 100, 0), (WAKE, 7, 0, -1, 0, 500, 500, 0), (POLL, 0, 0, 1, -1, 900, 1000, 1)]
    raw = RawTrace(events, 0, 1 << 10, [("t", 0, 1)], {"t": {0: "start", 1: "s1", -1: "done"}}, 16, "cuda")
    doc = _doc(raw)
    names = _threads(doc)
    assert _shown(doc, "executors (cuda)") == ["executor 1", "executor 8"]  # a bulk chunk's executor woke it
    assert _shown(doc, "tasks (cuda)") == ["task t 18"]  # after the 16 executors and the host
    named = set(names)
    assert all((e["pid"], e["tid"]) in named for e in doc["traceEvents"] if e["ph"] in ("X", "s", "f"))


# A POLL row's c is the poll's return code: 2 (FORK: its warp runs a parallel for, then polls
# again) is not READY (1). A wide FORK poll, then the READY one that finishes the instance.
FORKED = [(POLL, 0, 0, 0, 2, 0, 400_000, 2), (POLL, 0, 0, 2, -1, 500_000, 1_000_000, 1)]
FORK_STATES = {"t": {0: "start", 2: "s2 line 4: parallel for i", -1: "done"}}


def test_a_poll_that_forks_is_not_ready() -> None:
    raw = RawTrace(FORKED, 0, 1 << 10, [("t", 0, 1)], FORK_STATES, 1, "sim")
    doc = _doc(raw)
    polls = [e for e in doc["traceEvents"] if e.get("cat") == "poll" and "ready" in e["args"]]
    ready = {e["name"]: e["args"]["ready"] for e in polls}
    assert ready == {"t start→s2": False, "t s2→done": True}
    pens = re.findall(r'\ttp\d+ \[label="[^"]*" [^\]]*penwidth=([\d.]+)[^\]]*tooltip="([^"]*)"', schedule_dot(raw))
    assert pens == [
        ("0", "t start→s2: 0 ns..400 us on executor 1"),
        ("2.5", "t s2→done (ready): 500 us..1 ms on executor 1"),
    ]


def _key_edges(dot: str, prefix: str) -> list[tuple[float, float, float]]:
    """(left, right, y) of each node named ``prefix...`` (its pos is its centre, its width in inches)."""
    out = []
    for x, y, w in re.findall(rf'\t{prefix}[\w]* \[[^\]]*pos="([-\d.]+),([-\d.]+)!"[^\]]*width=([\d.]+)', dot):
        half = float(w) * 72 / 2
        out.append((float(x) - half, float(x) + half, float(y)))
    return out


def test_a_long_task_name_fits_its_label_column() -> None:
    name = "a_really_quite_extraordinarily_long_task_name"
    events = [(POLL, 0, 0, 0, -1, 0, 1000, 1)]
    raw = RawTrace(events, 0, 1 << 10, [(name, 0, 3)], {name: {0: "start", -1: "done"}}, 1, "sim")
    dot = schedule_dot(raw)
    [(left, right, _)] = _key_edges(dot, "task0")
    assert f'label="{name} x3"' in dot
    assert right - left >= len(f"{name} x3") * CHAR_W  # the label's width, not 130 points
    assert right < 0 and all(r - lft == right - left for lft, r, _ in _key_edges(dot, "(?:e0|axis|legend)"))
    cut = RawTrace(events, 0, 1 << 10, [("n" * 100, 0, 1)], {"n" * 100: {0: "start", -1: "done"}}, 1, "sim")
    assert re.search(rf'label="?{"n" * (MAX_LABEL - 1)}…"? ', schedule_dot(cut))
    assert re.search(rf'tooltip="?{"n" * 100}"?[ \]]', schedule_dot(cut))  # the whole name on hover


@needs_dot
def test_a_long_task_name_renders_without_a_graphviz_warning() -> None:
    name = "a_really_quite_extraordinarily_long_task_name"
    raw = RawTrace([(POLL, 0, 0, 0, -1, 0, 1000, 1)], 0, 1 << 10, [(name, 0, 3)], {name: {}}, 1, "sim")
    res = subprocess.run(["dot", "-Tsvg"], input=schedule_dot(raw), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "too small for label" not in res.stderr


def test_the_legend_wraps_at_the_runs_width() -> None:
    tasks = [(f"stage_number_{k}", k, 1) for k in range(30)]
    events = [(POLL, 0, k, 0, -1, 1000 * k, 1000 * k + 500, 1) for k in range(30)]
    raw = RawTrace(events, 0, 1 << 10, tasks, {}, 1, "sim")
    keys = _key_edges(schedule_dot(raw), "key")
    assert len(keys) == 31  # each task's colour, and the bold border
    assert abs(min(lft for lft, _, _ in keys)) < 0.1 and max(r for _, r, _ in keys) <= WIDTH
    rows = sorted({y for _, _, y in keys}, reverse=True)
    assert len(rows) >= 3 and rows == [rows[0] - k * ROW_H for k in range(len(rows))]  # rows, one under another


def test_a_trace_with_no_polls_says_so_and_draws_no_axis() -> None:
    raw = RawTrace([(WAKE, -1, 0, -1, 0, 50, 50, 0)], 9, 1, [("t", 0, 1)], {}, 2, "sim")
    dot = schedule_dot(raw)
    assert "no polls were recorded" in dot
    assert not re.findall(r'\tt\d+ \[label="([^"]*)"', dot)  # no ticks (they were 0 ns, 0.1 ns, ... 0.9 ns)
    assert "schedule: 0 polls on 0 of 2 executors (sim), 9 events dropped (buffer of 1)" in dot


def test_a_run_of_a_few_nanoseconds_ticks_whole_nanoseconds() -> None:
    raw = RawTrace([(POLL, 0, 0, 0, -1, 0, 3, 1)], 0, 1 << 10, [("t", 0, 1)], {}, 1, "sim")
    ticks = re.findall(r'\tt\d+ \[label="([^"]*)"', schedule_dot(raw))
    assert ticks == ["0 ns", "1 ns", "2 ns", "3 ns"]


def test_a_schedule_lane_of_a_groups_task_names_its_group() -> None:
    events = [(POLL, 0, k, 0, -1, 1000 * k, 1000 * k + 500, 1) for k in range(4)]
    tasks = [("loader", 0, 2), ("compute", 2, 1), ("report", 3, 1)]
    groups = [("loader", "pipe", 1, 0), ("compute", "pipe", 1, 0)]
    raw = RawTrace(events, 0, 1 << 10, tasks, {}, 1, "sim", groups=groups)
    dot = schedule_dot(raw)
    assert 'task0 [label="loader x2 in pipe"' in dot and 'task1 [label="compute in pipe"' in dot
    assert "task2 [label=report " in dot
