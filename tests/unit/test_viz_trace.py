"""Traces without a GPU: a synthetic RawTrace drawn as Chrome trace JSON and as a
schedule timeline; state labels and instance names from a real plan."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gasync import pipeline
from gasync.runtime.trace import POLL, WAKE, RawTrace, TraceFileError, instance_name, state_labels
from gasync.viz.perfetto import from_chrome_trace, to_chrome_trace
from gasync.viz.schedule import MAX_BOXES, schedule_dot, schedule_graph

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


def test_chrome_trace_has_a_track_per_executor_and_a_slice_per_poll() -> None:
    raw = synthetic()
    doc = json.loads(json.dumps(to_chrome_trace(raw)))  # plain JSON all the way down
    events = doc["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {0: "executor 0", 1: "executor 1", 2: "host"}
    polls = [e for e in events if e["ph"] == "X" and e["cat"] == "poll"]
    assert len(polls) == len(raw.polls())
    for e in polls:
        assert {"ts", "dur", "pid", "tid", "name"} <= e.keys()
        assert isinstance(e["ts"], float) and e["dur"] >= 0 and e["pid"] == 1
    assert min(e["ts"] for e in polls) == 0.0
    first = next(e for e in polls if e["name"] == "worker[0] start→s1")
    assert first["args"] == {
        "instance": 1,
        "state_before": "start",
        "state_after": "s1 line 3: yield_now()",
        "ready": False,
    }
    assert any(e["name"] == "worker[1] s1→done" and e["args"]["ready"] for e in polls)
    assert doc["otherData"]["events_dropped"] == 3


def test_wakes_are_flows_that_pair_up() -> None:
    doc = to_chrome_trace(synthetic())
    events = doc["traceEvents"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and starts.keys() == ends.keys()
    polls = [e for e in events if e["ph"] == "X"]
    for k, s in starts.items():
        f = ends[k]
        assert f["ts"] >= s["ts"] and f["bp"] == "e"
        assert any(p["tid"] == f["tid"] and p["ts"] == f["ts"] for p in polls)  # bound to the next poll
        assert any(p["tid"] == s["tid"] and p["ts"] <= s["ts"] <= p["ts"] + p["dur"] for p in polls)
    assert any(s["tid"] == 2 and s["args"]["by"] == "the host" for s in starts.values())


def test_the_raw_trace_travels_in_the_json() -> None:
    raw = synthetic()
    assert from_chrome_trace(json.loads(json.dumps(to_chrome_trace(raw)))) == raw


@pytest.mark.parametrize("doc", [{}, {"otherData": {"gasync": {"version": 1}}}, [], {"otherData": {"gasync": 3}}])
def test_a_foreign_json_document_is_a_trace_file_error(doc: object) -> None:
    with pytest.raises(TraceFileError):
        from_chrome_trace(doc)


def test_schedule_places_each_poll_on_its_executor_row() -> None:
    raw = synthetic()
    dot = schedule_dot(raw)
    assert "layout=neato" in dot
    rows = re.findall(r'\tp\d+ \[label="[^"]*" [^\]]*pos="([-\d.]+),([-\d.]+)!"', dot)
    assert len(rows) == len(raw.polls())
    polls = sorted(raw.polls(), key=lambda e: (e[1], e[5]))
    assert [float(y) for _, y in rows] == [-36.0 * e[1] for e in polls]
    xs = [float(x) for x, _ in rows[1:]]  # executor 0's polls after the boss's, in time order
    assert xs[: len(xs) // 2] == sorted(xs[: len(xs) // 2])
    assert "3 events dropped" in dot
    assert schedule_dot(raw) == dot  # deterministic


def test_a_long_schedule_is_binned() -> None:
    raw = synthetic(rounds=MAX_BOXES, executors=2, t0=0)
    dot = schedule_dot(raw)
    assert "\tp0 " not in dot
    assert dot.count("\tb") <= 2 * 200
    assert "polls (" in dot  # tooltips count polls per bin


@needs_dot
@pytest.mark.parametrize("rounds", [4, MAX_BOXES])
def test_schedule_renders_to_svg(rounds: int) -> None:
    svg = schedule_graph(synthetic(rounds=rounds)).pipe(format="svg").decode()
    ET.fromstring(svg)
    assert "executor 0" in svg and "worker" in svg
