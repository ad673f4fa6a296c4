"""A RawTrace as Chrome trace-event JSON, which https://ui.perfetto.dev opens.

Layout, chosen for what the Perfetto UI does with trace-event JSON:

- Process 1, ``tasks (sim)`` (the backend's name): a track per task (a
  thread named ``task NAME``, ``task NAME[0..N]`` for an array, ``task
  NAME[0..N] in GROUP[0..G]`` for a group's, ``in GROUP`` for a group
  without a range, its instances as their slices name them). Each instance
  is one slice from its first poll's start to its last poll's end, named
  ``worker[3]`` (``compute[1] in pipe[2]``), with its polls as child slices
  (``s1→s2``). An array's instances that overlap in
  time go on extra lanes of the task (``task worker (lane 2)``), packed
  greedily in start order, at most ``MAX_LANES`` a task; the instances
  beyond those are on the executor tracks only
  (``otherData.instances_not_on_task_tracks``).
- Process 2, ``executors (sim)``: a track per executor that polled or woke
  a task (a bulk chunk's executor wakes its task without polling). Device
  executor ``k`` is thread ``k + 1``, named ``executor`` (Perfetto merges a
  slice on tid 0 into the process's first track, so tracks count from 1),
  and one ``host`` track holds the host's wakes when there are any. Each
  POLL is a complete (``X``) slice named ``task[k] s1→s2`` with the states'
  labels in its args.
- Counters on process 2: ``instances alive`` (started, not yet done) and
  ``executors polling``, computed from the polls; and those the device
  sampled as each poll ended (``RawTrace.counters``): ``run queue`` (its
  length), ``in flight`` (the deadlock check's count) and ``channel NAME``
  (the values it holds) for each channel a traced poll used.
- Each WAKE whose woken instance is polled again later is a flow: ``s`` at
  the wake's time on the waker's executor track (inside the waker's poll
  slice; the host's and a timer's wakes get a zero-length ``wake`` slice of
  their own to start from) and ``f`` at the start of the woken instance's
  next poll, bound to that slice (``bp: e``).

Names are chosen for how Perfetto titles tracks: a thread's title is its
name, a space and its tid, and a process's its name, a space and its pid
(``getTrackName`` and the ProcessThreadGroups plugin of the UI). So no name
ends in a number, which the id would run into (``executor 1 1``, ``task
worker x2 5``): an executor's track is named ``executor`` and its tid is its
number, shown as ``executor 1``; the other names end in a word or a bracket
(``task worker[0..2] 5``, ``tasks (sim) 7``). chrome://tracing shows a
thread's name alone, so there every executor's track reads ``executor``, in
executor order (its tooltip gives the tid).

Times are microseconds from the earliest event. Metadata is one name per
process and per track that has slices, plus one sort index per process.
:func:`chrome_trace_text` writes real UTF-8 (``→``, not ``\\u2192``, which
Perfetto would show literally).

``otherData.gasync`` carries the RawTrace itself (``RawTrace.to_json``), so
``gasync schedule`` rebuilds exactly what the run recorded.
"""

from __future__ import annotations

import bisect
import json
from typing import Any

from gasync.runtime.trace import (
    DONE_STATE,
    Event,
    RawTrace,
    TraceFileError,
    counter_name,
    instance_name,
    state_name,
    task_of,
)

MAX_LANES = 64
# a POLL row's ``c`` is the code the poll returned (codegen/shared.py): PENDING 0, READY 1,
# FORK 2 (its warp runs a parallel for, then polls again), ABORT 3; only READY finished the instance
READY = 1
# Perfetto names a counter track "<event name> <arg key>"
ALIVE = ("instances", "alive")
POLLING = ("executors", "polling")


def to_chrome_trace(raw: RawTrace) -> dict[str, Any]:
    """The trace-event document (a dict ready for ``json.dump``)."""
    origin = raw.origin
    polls = sorted(raw.polls(), key=lambda e: (e[5], e[1]))
    ids = _Ids(raw)
    task_events, task_tracks, left_off = _task_tracks(raw, polls, origin, ids)
    executors = sorted({e[1] for e in polls})
    wakers = {e[1] for e in raw.wakes() if e[1] >= 0}  # a bulk chunk's executor wakes without polling a task
    host = any(e[1] < 0 for e in raw.wakes())
    events: list[dict[str, Any]] = _metadata(raw, ids, task_tracks, sorted(set(executors) | wakers), host)
    events += task_events
    events += [_poll(raw, e, origin, ids) for e in polls]
    events += _flows(raw, polls, origin, ids)
    events += _counters(polls, origin, ids)
    events += _device_counters(raw, origin, ids)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "backend": raw.backend,
            "executors": raw.executors,
            "executors_that_polled": len(executors),
            "events_recorded": len(raw.events),
            "events_dropped": raw.dropped,
            "capacity": raw.capacity,
            "instances_not_on_task_tracks": left_off,
            "gasync": raw.to_json(),
        },
    }


class _Ids:
    """Thread and process ids. Every tid is unique in the document and none is 0 (a
    slice on tid 0 joins its process's first track) or equal to its pid (Perfetto
    calls that thread "main thread"): executors 1..E, the host E + 1, task
    tracks from E + 2, and the two processes after all of them."""

    def __init__(self, raw: RawTrace) -> None:
        self.host = raw.executors + 1
        self.tasks_pid = self.host + 1 + len(raw.tasks) * MAX_LANES
        self.executors_pid = self.tasks_pid + 1

    def task_track(self, k: int) -> int:
        return self.host + 1 + k

    def waker(self, executor: int) -> int:
        return self.host if executor < 0 else executor_tid(executor)


def chrome_trace_text(raw: RawTrace) -> str:
    """The document as JSON text, non-ASCII characters kept as they are (write it as UTF-8)."""
    return json.dumps(to_chrome_trace(raw), ensure_ascii=False) + "\n"


def from_chrome_trace(doc: Any) -> RawTrace:
    """The RawTrace a document from :func:`to_chrome_trace` carries."""
    if not isinstance(doc, dict) or "gasync" not in (doc.get("otherData") or {}):
        raise TraceFileError("not a trace written by 'gasync run --trace' (no otherData.gasync)")
    return RawTrace.from_json(doc["otherData"]["gasync"])


def executor_tid(executor: int) -> int:
    """The thread id of an executor's track, and the number it is shown with (from 1)."""
    return executor + 1


def _us(t: int, origin: int) -> float:
    return round((t - origin) / 1000.0, 3)


def _dur(t0: int, t1: int) -> float:
    return round(max(0.0, (t1 - t0) / 1000.0), 3)


def _name(pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}}


def _metadata(
    raw: RawTrace, ids: _Ids, task_tracks: list[tuple[int, str]], executors: list[int], host: bool
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    processes = ((ids.tasks_pid, f"tasks ({raw.backend})"), (ids.executors_pid, f"executors ({raw.backend})"))
    for k, (pid, name) in enumerate(processes):
        out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": k + 1}})
    out += [_name(ids.tasks_pid, tid, name) for tid, name in task_tracks]
    out += [_name(ids.executors_pid, executor_tid(w), "executor") for w in executors]  # Perfetto adds the tid
    if host:
        out.append(_name(ids.executors_pid, ids.host, "host"))
    return out


def _lifetimes(polls: list[Event]) -> dict[int, list[Event]]:
    """instance -> its polls in time order (instances in order of their first poll)."""
    out: dict[int, list[Event]] = {}
    for e in polls:
        out.setdefault(e[2], []).append(e)
    return out


def _task_tracks(
    raw: RawTrace, polls: list[Event], origin: int, ids: _Ids
) -> tuple[list[dict[str, Any]], list[tuple[int, str]], int]:
    """The slices of the task tracks, the tracks as (tid, name), and how many instances did not fit."""
    by_inst = _lifetimes(polls)
    events: list[dict[str, Any]] = []
    tracks: list[tuple[int, str]] = []
    left_off = 0
    for name, first, count in raw.tasks:
        lanes: list[int] = []  # the end time of each lane's last instance
        base = ids.task_track(len(tracks))
        for inst in sorted((i for i in by_inst if first <= i < first + count), key=lambda i: by_inst[i][0][5]):
            mine = by_inst[inst]
            start, end = mine[0][5], max(e[6] for e in mine)
            lane = next((k for k, t in enumerate(lanes) if t <= start), len(lanes))
            if lane == MAX_LANES:
                left_off += 1
                continue
            if lane == len(lanes):
                lanes.append(end)
                tracks.append((base + lane, _track_title(raw, name, count, lane)))
            lanes[lane] = end
            events += _instance(raw, inst, mine, ids.tasks_pid, base + lane, origin)
    return events, tracks, left_off


def _track_title(raw: RawTrace, task: str, count: int, lane: int = 0) -> str:
    """The name of a task's track, with its instances as :func:`instance_name` names them:
    ``task boss``, ``task worker[0..4]``, ``task loader in pipe[0..4]``, ``task compute[0..3]
    in pipe[0..4]``; a further lane without the ranges, ``task compute in pipe (lane 2)``, as
    Perfetto cuts long titles short. None ends in a digit, which Perfetto's tid would run into."""
    group, per, start = next(((g, n, s) for t, g, n, s in raw.groups if t == task), (None, count, 0))
    if lane > 0:
        return f"task {task}" + (f" in {group}" if group else "") + f" (lane {lane + 1})"
    own = f"task {task}{_range(0, per)}"
    if group is None:
        return own
    return f"{own} in {group}" + ("" if group in raw.unranged else _range(start, count // max(per, 1), always=True))


def _range(start: int, n: int, always: bool = False) -> str:
    """``[0..n]``, the range's own syntax; ``[k]`` for one (``always``) or nothing."""
    if n != 1:
        return f"[{start}..{start + n}]"
    return f"[{start}]" if always else ""


def _instance(raw: RawTrace, inst: int, polls: list[Event], pid: int, tid: int, origin: int) -> list[dict[str, Any]]:
    """One instance's slice and its polls as children (polls of one instance never overlap)."""
    start, end = polls[0][5], max(e[6] for e in polls)
    head = {
        "ph": "X", "name": instance_name(raw, inst), "cat": "instance", "pid": pid, "tid": tid,
        "ts": _us(start, origin), "dur": _dur(start, end),
        "args": {"instance": inst, "polls": len(polls), "executors": sorted({executor_tid(e[1]) for e in polls})},
    }  # fmt: skip
    children = [
        {
            "ph": "X",
            "name": f"{state_name(a)}→{state_name(b)}",
            "cat": "poll",
            "pid": pid,
            "tid": tid,
            "ts": _us(t0, origin),
            "dur": _dur(t0, t1),
            "args": {
                "executor": executor_tid(w),
                "state_before": _label(raw, inst, a),
                "state_after": _label(raw, inst, b),
            },
        }  # fmt: skip
        for _, w, _, a, b, t0, t1, _ in polls
    ]
    return [head, *children]


def _label(raw: RawTrace, inst: int, state: int) -> str:
    task = task_of(raw, inst)
    labels = raw.states.get(task or "", {})
    return labels.get(state, f"s{state} (internal: a parallel or bulk for)")


def _poll(raw: RawTrace, e: Event, origin: int, ids: _Ids) -> dict[str, Any]:
    _, w, inst, a, b, t0, t1, c = e
    return {
        "ph": "X",
        "name": f"{instance_name(raw, inst)} {state_name(a)}→{state_name(b)}",
        "cat": "poll",
        "pid": ids.executors_pid,
        "tid": executor_tid(w),
        "ts": _us(t0, origin),
        "dur": _dur(t0, t1),
        "args": {
            "instance": inst,
            "state_before": _label(raw, inst, a),
            "state_after": _label(raw, inst, b),
            "ready": c == READY,
        },
    }


def _flows(raw: RawTrace, polls: list[Event], origin: int, ids: _Ids) -> list[dict[str, Any]]:
    """A flow from each wake to the woken instance's next poll (wakes with no later poll are left out)."""
    mine_by: dict[int, list[tuple[int, int]]] = {}  # instance -> [(t0, executor)] in time order
    for e in polls:
        mine_by.setdefault(e[2], []).append((e[5], e[1]))
    out: list[dict[str, Any]] = []
    flow = 0
    for e in sorted(raw.wakes(), key=lambda e: e[5]):
        _, w, inst, waker, _, t, _, _ = e
        mine = mine_by.get(inst, [])
        k = bisect.bisect_left(mine, (t, -(1 << 62)))
        if k == len(mine):
            continue
        t_next, w_next = mine[k]
        flow += 1
        tid = ids.waker(w)
        by = "the host" if w < 0 else instance_name(raw, waker) if waker >= 0 else "a timer or bulk chunk"
        if w < 0 or waker < 0:  # no poll of the waker encloses the wake: give it a slice of its own
            out.append(_wake_slice(raw, inst, by, ids.executors_pid, tid, _us(t, origin)))
        common = {"cat": "wake", "name": "wake", "id": flow, "pid": ids.executors_pid}
        out.append({**common, "ph": "s", "tid": tid, "ts": _us(t, origin), "args": {"by": by}})
        out.append({**common, "ph": "f", "bp": "e", "tid": executor_tid(w_next), "ts": _us(t_next, origin)})
    return out


def _wake_slice(raw: RawTrace, inst: int, by: str, pid: int, tid: int, ts: float) -> dict[str, Any]:
    return {
        "ph": "X",
        "name": f"wake {instance_name(raw, inst)}",
        "cat": "wake",
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": 0.0,
        "args": {"by": by},
    }


def _counters(polls: list[Event], origin: int, ids: _Ids) -> list[dict[str, Any]]:
    """``instances alive`` and ``executors polling`` at each change (computed from the polls)."""
    steps: list[tuple[int, tuple[str, str], int]] = []
    for mine in _lifetimes(polls).values():
        steps.append((mine[0][5], ALIVE, 1))
        if mine[-1][4] == DONE_STATE:
            steps.append((max(e[6] for e in mine), ALIVE, -1))
    for e in polls:
        steps += [(e[5], POLLING, 1), (e[6], POLLING, -1)]
    out: list[dict[str, Any]] = []
    value = {ALIVE: 0, POLLING: 0}
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for t, name, d in sorted(steps, key=lambda s: (s[0], s[2])):  # at one time, ends before starts
        value[name] += d
        ts = _us(t, origin)
        if name in last and last[name]["ts"] == ts:
            last[name]["args"][name[1]] = value[name]
            continue
        pid = ids.executors_pid
        last[name] = {"ph": "C", "name": name[0], "pid": pid, "tid": 0, "ts": ts, "args": {name[1]: value[name]}}
        out.append(last[name])
    return out


def _device_counters(raw: RawTrace, origin: int, ids: _Ids) -> list[dict[str, Any]]:
    """The counters the device sampled at the polls' ends, one ``C`` event per change; a
    name of two words or more is split at its first space into the event's name and its
    argument's key, so that Perfetto calls the track by the whole name."""
    out: list[dict[str, Any]] = []
    last: dict[int, dict[str, Any]] = {}
    for t, k, value in raw.counters:
        ts = _us(t, origin)
        if k in last and last[k]["ts"] == ts:  # two polls that ended in one nanosecond
            last[k]["args"] = {key: value for key in last[k]["args"]}
            continue
        name, key = counter_name(raw, k).split(" ", 1)
        last[k] = {"ph": "C", "name": name, "pid": ids.executors_pid, "tid": 0, "ts": ts, "args": {key: value}}
        out.append(last[k])
    return out
