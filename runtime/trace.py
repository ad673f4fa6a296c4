"""A traced run's raw events, as the device recorded them, and their names.

The kernel of a program generated with ``trace=True`` appends one row per
event to a bounded device buffer (runtime/state.py's ``TraceCol`` columns);
``launch.py`` copies it back as a :class:`RawTrace`. Nothing here knows about
drawing: ``viz/`` turns a RawTrace into a Perfetto trace or a schedule timeline.

Event rows ``(kind, executor, inst, a, b, t0, t1, c)``:

- ``POLL`` (1): executor ``executor`` polled task instance ``inst`` from
  state ``a`` to state ``b`` between device-clock times ``t0`` and ``t1``
  (ns); ``c`` is what the poll returned (codegen/shared.py): 0 PENDING, 1
  READY, 2 FORK (its warp runs a parallel loop, then polls again), 3 ABORT
  (the deadline passed in one of its loops).
- ``WAKE`` (2): at ``t0`` (== ``t1``) executor ``executor`` (-1: the host)
  woke ``inst``; ``a`` is the waking instance (-1: a timer, a bulk chunk,
  the host).

States are the task's own state word: 0 start, the await site number while
suspended there, -1 done (codegen's numbering).

Counters. A POLL row also holds what the device sampled as the poll ended
(runtime/state.py, Trace, says what each includes): the run queue's length,
the instances in flight (the deadlock check's count), and the occupancy of
each channel the polled task sends or receives on. :func:`counters_of` turns them into
``RawTrace.counters``, ``(t, counter, value)`` at the poll's ``t1``, in time
order, a sample kept only where its counter changed; ``counter`` is
``QUEUE``, ``INFLIGHT`` or ``CHANNEL + c`` for the plan's channel ``c``
(:func:`counter_name`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gasync.dsl.diagnostics import GasyncError
from gasync.planner import ir
from gasync.planner.model import Plan
from gasync.planner.printer import describe
from gasync.planner.walk import stmts_in
from gasync.runtime.state import TraceCol, TraceKind

POLL = int(TraceKind.POLL)
WAKE = int(TraceKind.WAKE)
START_STATE = 0
DONE_STATE = -1
FORMAT_VERSION = 2  # 2: channels and counters
READS = (1, FORMAT_VERSION)  # a version 1 file has no counters

# RawTrace.counters' counter ids; channel c (the plan's order) is CHANNEL + c
QUEUE = 0
INFLIGHT = 1
CHANNEL = 2

Event = tuple[int, int, int, int, int, int, int, int]
Counter = tuple[int, int, int]  # (t, counter, value)


class TraceFileError(GasyncError):
    """A trace file that is not (or no longer) what ``gasync run --trace`` writes (exit status 1)."""

    code = "E0311"


@dataclass
class RawTrace:
    events: list[tuple[int, int, int, int, int, int, int, int]]  # (kind, executor, inst, a, b, t0, t1, c)
    dropped: int  # events not recorded because the device buffer was full
    capacity: int
    tasks: list[tuple[str, int, int]]  # (task name, first instance, count), from the plan
    states: dict[str, dict[int, str]]  # task name -> {state number: label}
    executors: int
    backend: str
    channels: list[tuple[str, int]] = field(default_factory=list)  # (name, capacity), the plan's order
    counters: list[Counter] = field(default_factory=list)  # (t, counter, value), from the polls (counters_of)
    # (task, its group, its instances per group instance, the group's first index): a group's tasks
    groups: list[tuple[str, str, int, int]] = field(default_factory=list)
    unranged: list[str] = field(default_factory=list)  # groups without `for`: one instance, named without [0]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (state keys become strings); :meth:`from_json` reads it back."""
        return {
            "version": FORMAT_VERSION,
            "events": [list(e) for e in self.events],
            "dropped": self.dropped,
            "capacity": self.capacity,
            "tasks": [list(t) for t in self.tasks],
            "states": {task: {str(k): v for k, v in labels.items()} for task, labels in self.states.items()},
            "executors": self.executors,
            "backend": self.backend,
            "channels": [list(c) for c in self.channels],
            "counters": [list(c) for c in self.counters],
            "groups": [list(g) for g in self.groups],
            "unranged": list(self.unranged),
        }

    @classmethod
    def from_json(cls, data: Any) -> RawTrace:
        """The inverse of :meth:`to_json`; a malformed document raises TraceFileError."""
        try:
            if data["version"] not in READS:
                raise TraceFileError(f"trace format version {data['version']} (this gasync reads {FORMAT_VERSION})")
            events = [_event(e) for e in data["events"]]
            v2 = data["version"] >= 2
            return cls(
                events=events,
                dropped=int(data["dropped"]),
                capacity=int(data["capacity"]),
                tasks=[(str(n), int(f), int(c)) for n, f, c in data["tasks"]],
                states={str(t): {int(k): str(v) for k, v in s.items()} for t, s in data["states"].items()},
                executors=int(data["executors"]),
                backend=str(data["backend"]),
                channels=[(str(n), int(c)) for n, c in data["channels"]] if v2 else [],
                counters=[(int(t), int(k), int(v)) for t, k, v in data["counters"]] if v2 else [],
                groups=[(str(t), str(g), int(n), int(s)) for t, g, n, s in data.get("groups", [])],
                unranged=[str(g) for g in data.get("unranged", [])],
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise TraceFileError(f"malformed gasync trace data ({type(exc).__name__}: {exc})") from None

    def polls(self) -> list[Event]:
        return [e for e in self.events if e[0] == POLL]

    def wakes(self) -> list[Event]:
        return [e for e in self.events if e[0] == WAKE]

    @property
    def origin(self) -> int:
        """The earliest time of any event (times are shown relative to it)."""
        return min((e[5] for e in self.events), default=0)


def counters_of(
    rows: Sequence[Sequence[int]],
    ends: Sequence[int],
    task_channels: Sequence[Sequence[int]],
    channels: Sequence[tuple[str, int]],
) -> list[Counter]:
    """The counters of the POLL rows among ``rows`` (whole TRACE rows, TraceCol columns), as
    ``(t1, counter, value)`` in time order, each kept only where its counter changed.
    ``ends``: each task's first instance past its own (the plan's order); ``task_channels``:
    each task's channels (``Generated.trace_channels``), whose occupancies its rows hold.

    A reading is clamped into what the counter can hold (a length at least 0, an occupancy
    at most the channel's capacity): the device reads a head and a tail with two relaxed
    loads, which another executor's work may come between (runtime/state.py, Trace)."""
    samples: list[Counter] = []
    for row in rows:
        if row[TraceCol.KIND] != POLL:
            continue
        t = row[TraceCol.T1]
        samples.append((t, QUEUE, max(0, row[TraceCol.QUEUE])))
        samples.append((t, INFLIGHT, max(0, row[TraceCol.INFLIGHT])))
        task = bisect.bisect_right(ends, row[TraceCol.INST])
        mine = task_channels[task] if task < len(task_channels) else ()
        for j, c in enumerate(mine):
            samples.append((t, CHANNEL + c, min(max(0, row[TraceCol.CHANNELS + j]), channels[c][1])))
    samples.sort(key=lambda s: s[0])  # stable: polls that ended at one time keep their order
    last: dict[int, int] = {}
    out = []
    for t, k, v in samples:
        if last.get(k) != v:
            last[k] = v
            out.append((t, k, v))
    return out


def counter_name(raw: RawTrace, counter: int) -> str:
    """``run queue``, ``in flight`` or ``channel NAME``: a counter's track in Perfetto."""
    if counter == QUEUE:
        return "run queue"
    if counter == INFLIGHT:
        return "in flight"
    return f"channel {raw.channels[counter - CHANNEL][0]}"


def _event(e: Any) -> Event:
    if len(e) != 8:
        raise ValueError(f"an event has 8 fields, found {len(e)}")
    k, w, i, a, b, t0, t1, c = (int(x) for x in e)
    return (k, w, i, a, b, t0, t1, c)


def awaited(s: ir.AwaitS | ir.Select | ir.ForAwait) -> str:
    """What an await point waits on, in source-like words (as ``--emit plan`` says it)."""
    if isinstance(s, ir.AwaitS):
        return describe(s.future)
    if isinstance(s, ir.Select):
        return "select { " + " | ".join(describe(a.future) for a in s.arms) + " }"
    return f"for await {s.var} in {s.chan}"


def site_label(s: ir.AwaitS | ir.Select | ir.ForAwait) -> str:
    """``s2 line 14: work.recv()``: the state an await point is, where it is, what it awaits."""
    return f"s{s.site} line {s.span.line}: {awaited(s)}"


def await_points(body: tuple[ir.Stmt, ...]) -> list[ir.AwaitS | ir.Select | ir.ForAwait]:
    """The suspending await points of ``body`` that are states of its own state word
    (those inside async blocks belong to the block's own word), in source order."""
    out: list[ir.AwaitS | ir.Select | ir.ForAwait] = []
    for s in stmts_in(body, into_futures=False):
        if isinstance(s, ir.Select | ir.ForAwait) or (isinstance(s, ir.AwaitS) and s.suspends):
            out.append(s)
    return out


def state_labels(plan: Plan, internal: tuple[tuple[str, int, str], ...] = ()) -> dict[str, dict[int, str]]:
    """Task name -> {0: "start", site: "sN line L: what", -1: "done"}, and the states codegen adds
    beyond the await sites (``internal``: ``Generated.internal_states``, e.g. a bulk for's)."""
    out = {}
    for t in plan.tasks:
        labels = {START_STATE: "start"}
        labels.update({s.site: site_label(s) for s in await_points(t.body.body)})
        labels.update({state: label for task, state, label in internal if task == t.name})
        labels[DONE_STATE] = "done"
        out[t.name] = labels
    return out


def instance_name(raw: RawTrace, inst: int) -> str:
    """``task`` for a task of one instance, ``task[k]`` for instance k of an array; a group's
    task by its place in its group instance and that instance, ``compute[2] in pipe[1]``
    (``compute[2] in pipe`` for a group without a range, as run-time errors name it)."""
    grouped = {t: (g, n, s) for t, g, n, s in raw.groups}
    for name, first, count in raw.tasks:
        if first <= inst < first + count:
            if name in grouped:  # its place in its group instance, and that instance
                group, per, start = grouped[name]
                own = name if per == 1 else f"{name}[{(inst - first) % max(per, 1)}]"
                where = "" if group in raw.unranged else f"[{start + (inst - first) // max(per, 1)}]"
                return f"{own} in {group}{where}"
            return name if count == 1 else f"{name}[{inst - first}]"
    return f"#{inst}"


def task_of(raw: RawTrace, inst: int) -> str | None:
    """The name of the task an instance belongs to (None if none does)."""
    for name, first, count in raw.tasks:
        if first <= inst < first + count:
            return name
    return None


def state_name(state: int) -> str:
    """The short name of a state in slice titles: start, done or sN."""
    return {START_STATE: "start", DONE_STATE: "done"}.get(state, f"s{state}")
