"""A RawTrace as Chrome trace-event JSON, which https://ui.perfetto.dev opens.

Layout: process 1 is the GPU; thread ``k`` is executor ``k`` (named
``executor k``), and one more thread, ``host``, holds the host's wakes. Each
POLL is a complete (``X``) slice named ``task[k] s1→s2`` with the states'
labels in its args. Each WAKE whose woken instance is polled again later is
a flow: ``s`` at the wake's time on the waker's track (inside the waker's
poll slice; the host's and a timer's wakes get a zero-length ``wake`` slice
of their own to start from) and ``f`` at the start of the woken instance's
next poll, bound to that slice (``bp: e``). Times are microseconds from the
earliest event.

``otherData.gasync`` carries the RawTrace itself (``RawTrace.to_json``), so
``gasync schedule`` rebuilds exactly what the run recorded.
"""

from __future__ import annotations

import bisect
from typing import Any

from gasync.runtime.trace import POLL, WAKE, RawTrace, TraceFileError, instance_name, state_name, task_of

PID = 1


def to_chrome_trace(raw: RawTrace) -> dict[str, Any]:
    """The trace-event document (a dict ready for ``json.dump``)."""
    origin = raw.origin
    events: list[dict[str, Any]] = _metadata(raw)
    events += [_poll(raw, e, origin) for e in raw.events if e[0] == POLL]
    events += _flows(raw, origin)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "backend": raw.backend,
            "executors": raw.executors,
            "events_recorded": len(raw.events),
            "events_dropped": raw.dropped,
            "capacity": raw.capacity,
            "gasync": raw.to_json(),
        },
    }


def from_chrome_trace(doc: Any) -> RawTrace:
    """The RawTrace a document from :func:`to_chrome_trace` carries."""
    if not isinstance(doc, dict) or "gasync" not in (doc.get("otherData") or {}):
        raise TraceFileError("not a trace written by 'gasync run --trace' (no otherData.gasync)")
    return RawTrace.from_json(doc["otherData"]["gasync"])


def _us(t: int, origin: int) -> float:
    return round((t - origin) / 1000.0, 3)


def _metadata(raw: RawTrace) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": f"gasync ({raw.backend})"}}
    ]
    names = [f"executor {k}" for k in range(raw.executors)] + ["host"]
    for tid, name in enumerate(names):
        out.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": tid, "args": {"name": name}})
        out.append({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": tid, "args": {"sort_index": tid}})
    return out


def _label(raw: RawTrace, inst: int, state: int) -> str:
    task = task_of(raw, inst)
    labels = raw.states.get(task or "", {})
    return labels.get(state, f"s{state} (internal: a parallel or bulk for)")


def _poll(raw: RawTrace, e: tuple[int, ...], origin: int) -> dict[str, Any]:
    _, w, inst, a, b, t0, t1, c = e
    return {
        "ph": "X",
        "name": f"{instance_name(raw, inst)} {state_name(a)}→{state_name(b)}",
        "cat": "poll",
        "pid": PID,
        "tid": w,
        "ts": _us(t0, origin),
        "dur": round(max(0.0, (t1 - t0) / 1000.0), 3),
        "args": {
            "instance": inst,
            "state_before": _label(raw, inst, a),
            "state_after": _label(raw, inst, b),
            "ready": bool(c),
        },
    }


def _flows(raw: RawTrace, origin: int) -> list[dict[str, Any]]:
    """A flow from each wake to the woken instance's next poll (wakes with no later poll are left out)."""
    polls: dict[int, list[tuple[int, int]]] = {}  # instance -> [(t0, executor)] in time order
    for e in sorted((e for e in raw.events if e[0] == POLL), key=lambda e: e[5]):
        polls.setdefault(e[2], []).append((e[5], e[1]))
    out: list[dict[str, Any]] = []
    host, flow = raw.executors, 0
    for e in sorted((e for e in raw.events if e[0] == WAKE), key=lambda e: e[5]):
        _, w, inst, waker, _, t, _, _ = e
        mine = polls.get(inst, [])
        k = bisect.bisect_left(mine, (t, -(1 << 62)))
        if k == len(mine):
            continue
        t_next, w_next = mine[k]
        flow += 1
        tid = host if w < 0 else w
        by = "the host" if w < 0 else instance_name(raw, waker) if waker >= 0 else "a timer or bulk chunk"
        if w < 0 or waker < 0:  # no poll of the waker encloses the wake: give it a slice of its own
            out.append(_wake_slice(raw, inst, by, tid, _us(t, origin)))
        common = {"cat": "wake", "name": "wake", "id": flow, "pid": PID}
        out.append({**common, "ph": "s", "tid": tid, "ts": _us(t, origin), "args": {"by": by}})
        out.append({**common, "ph": "f", "bp": "e", "tid": w_next, "ts": _us(t_next, origin)})
    return out


def _wake_slice(raw: RawTrace, inst: int, by: str, tid: int, ts: float) -> dict[str, Any]:
    return {
        "ph": "X",
        "name": f"wake {instance_name(raw, inst)}",
        "cat": "wake",
        "pid": PID,
        "tid": tid,
        "ts": ts,
        "dur": 0.0,
        "args": {"by": by},
    }
