"""Counters in traces without a GPU: the device's rows turned into counters, their JSON, the
Perfetto counter tracks ("run queue", "in flight", "channel NAME"), the peaks, and the traced
code that samples them (untraced code samples nothing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from unit.test_viz_trace import synthetic  # tests/ is on sys.path (conftest.py)

from gasync import pipeline
from gasync.codegen import generate, trace_channels
from gasync.runtime.options import Result
from gasync.runtime.profile import peaks
from gasync.runtime.state import TRACE_WORDS, TraceCol
from gasync.runtime.trace import CHANNEL, INFLIGHT, POLL, QUEUE, WAKE, RawTrace, counter_name, counters_of
from gasync.viz.perfetto import chrome_trace_text, from_chrome_trace

SAMPLES = Path(__file__).parents[2] / "samples"
CHANNELS = [("a", 2), ("b", 3)]
ENDS = [1, 3]  # task 0: instance 0 (uses a and b); task 1: instances 1 and 2 (uses b only)
TASK_CHANNELS = [(0, 1), (1,)]


def row(kind: int, inst: int, t0: int, t1: int, queue: int = 0, inflight: int = 0, *occupancy: int) -> list[int]:
    out = [0] * (TRACE_WORDS + 2)
    out[TraceCol.KIND], out[TraceCol.INST], out[TraceCol.T0], out[TraceCol.T1] = kind, inst, t0, t1
    out[TraceCol.QUEUE], out[TraceCol.INFLIGHT] = queue, inflight
    for j, v in enumerate(occupancy):
        out[TraceCol.CHANNELS + j] = v
    return out


def test_the_polls_rows_become_counters_in_time_order_kept_where_they_change() -> None:
    rows = [
        row(POLL, 0, 10, 20, 1, 3, 2, 1),  # a: 2, b: 1
        row(WAKE, 1, 15, 15, 9, 9, 9, 9),  # a wake holds no counters
        row(POLL, 1, 12, 18, 0, 3, 1),  # task 1: its first channel is b; ends first
        row(POLL, 2, 21, 30, 0, 2, 1),  # b unchanged: left out
    ]
    got = counters_of(rows, ENDS, TASK_CHANNELS, CHANNELS)
    assert got == [
        (18, QUEUE, 0), (18, INFLIGHT, 3), (18, CHANNEL + 1, 1),
        (20, QUEUE, 1), (20, CHANNEL + 0, 2),
        (30, QUEUE, 0), (30, INFLIGHT, 2),
    ]  # fmt: skip


def test_a_skewed_reading_is_clamped_into_what_the_counter_holds() -> None:
    got = counters_of([row(POLL, 0, 1, 2, -1, -2, 5, -1)], ENDS, TASK_CHANNELS, CHANNELS)
    assert got == [(2, QUEUE, 0), (2, INFLIGHT, 0), (2, CHANNEL + 0, 2), (2, CHANNEL + 1, 0)]


def counted() -> RawTrace:
    raw = synthetic()
    raw.channels = list(CHANNELS)
    t = raw.origin
    raw.counters = [
        (t + 300, QUEUE, 0), (t + 300, INFLIGHT, 3), (t + 300, CHANNEL + 0, 2),
        (t + 1700, QUEUE, 2), (t + 1700, CHANNEL + 1, 3),
        (t + 1700, QUEUE, 1),  # a second poll ended in the same nanosecond: its value wins
        (t + 2700, CHANNEL + 0, 0), (t + 2700, INFLIGHT, 1),
    ]  # fmt: skip
    return raw


def _tracks(doc: dict[str, Any]) -> dict[str, list[tuple[float, int]]]:
    """Perfetto's counter track name ("<event name> <arg key>") -> its (ts, value) points."""
    out: dict[str, list[tuple[float, int]]] = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "C":
            for key, value in e["args"].items():
                out.setdefault(f"{e['name']} {key}", []).append((e["ts"], value))
    return out


def test_perfetto_has_a_counter_track_per_counter_on_the_executors_process() -> None:
    text = chrome_trace_text(counted())
    assert "\\u" not in text
    doc = json.loads(text)
    tracks = _tracks(doc)
    assert set(tracks) == {"instances alive", "executors polling", "run queue", "in flight", "channel a", "channel b"}
    assert tracks["run queue"] == [(0.3, 0), (1.7, 1)]
    assert tracks["in flight"] == [(0.3, 3), (2.7, 1)]
    assert tracks["channel a"] == [(0.3, 2), (2.7, 0)]
    assert tracks["channel b"] == [(1.7, 3)]
    processes = {e["args"]["name"]: e["pid"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    execs = processes["executors (sim)"]
    assert {e["pid"] for e in doc["traceEvents"] if e["ph"] == "C"} == {execs}


def test_the_counters_travel_in_the_json_and_a_version_1_file_has_none() -> None:
    raw = counted()
    doc = json.loads(chrome_trace_text(raw))
    back = from_chrome_trace(doc)
    assert back.counters == raw.counters and back.channels == raw.channels
    old = doc["otherData"]["gasync"]
    old["version"] = 1
    del old["channels"], old["counters"]
    back = from_chrome_trace(doc)
    assert back.events == raw.events and back.counters == [] and back.channels == []
    assert "C" in {e["ph"] for e in json.loads(chrome_trace_text(back))["traceEvents"]}  # alive, polling
    assert peaks(back) == {}


def test_peaks_name_every_counter_with_a_channels_capacity() -> None:
    raw = counted()
    assert [counter_name(raw, k) for k in (QUEUE, INFLIGHT, CHANNEL + 1)] == ["run queue", "in flight", "channel b"]
    assert peaks(raw) == {"run queue": (2, None), "in flight": (3, None), "channel a": (2, 2), "channel b": (3, 3)}
    data = Result({}, {}, {}, {}, trace=raw).to_json()
    assert data["counter_peaks"] == {"run queue": 2, "in flight": 3, "channel a": 2, "channel b": 3}


def test_traced_polls_sample_the_channels_of_their_task_and_untraced_code_nothing() -> None:
    plan = pipeline.check(SAMPLES / "join_select.gasync")
    names = [t.name for t in plan.tasks]
    used = dict(zip(names, trace_channels(plan), strict=True))
    assert used == {"main": (), "producer": (0,), "consumer": (0,)}
    traced = generate(plan, trace=True)
    assert traced.trace_channels == tuple(used.values()) and traced.trace_words == TRACE_WORDS + 1
    assert traced.source.count("dsync.trace_poll(") == len(names)
    assert traced.source.count("dsync.trace_occupancy(G.TRACE, k, 0, G.chan, CH_work)") == 2
    plain = generate(plan)
    assert plain.trace_channels == () and plain.trace_words == TRACE_WORDS
    assert "trace_" not in plain.source
