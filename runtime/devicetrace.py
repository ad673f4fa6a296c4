"""Device helpers of a traced run (compiled in only when a program is generated with
``trace=True``): a row of TRACE per event, its columns state.TraceCol (runtime/state.py,
Trace); CTL[CTL_TRACE_N] counts events, including those that did not fit (dropped =
count - capacity). devicesync.py re-exports these for the generated code (``dsync``)."""

from __future__ import annotations

from numba import int64

from gasync.runtime import linked
from gasync.runtime.devicelib import ld, now_ns, wake
from gasync.runtime.order import add
from gasync.runtime.words import (
    CTL_INFLIGHT,
    CTL_TRACE_N,
    HEAD,
    TAIL,
    TR_A,
    TR_B,
    TR_C,
    TR_CHANNELS,
    TR_EXECUTOR,
    TR_INFLIGHT,
    TR_INST,
    TR_KIND,
    TR_QUEUE,
    TR_T0,
    TR_T1,
    TRACE_POLL,
    TRACE_WAKE,
)


@linked.device
def trace_event(trace, ctl, kind, w, inst, a, b, t0, t1, c):  # type: ignore[no-untyped-def]
    """Record one event; returns its row (one at or past ``trace.shape[0]`` was dropped)."""
    k = add(ctl, CTL_TRACE_N, int64(1))
    if k < trace.shape[0]:
        trace[k, TR_KIND] = kind
        trace[k, TR_EXECUTOR] = w
        trace[k, TR_INST] = inst
        trace[k, TR_A] = a
        trace[k, TR_B] = b
        trace[k, TR_T0] = t0
        trace[k, TR_T1] = t1
        trace[k, TR_C] = c
    return k


@linked.device
def trace_poll(trace, sched, w, inst, a, b, t0, c):  # type: ignore[no-untyped-def]
    """Record a poll of ``inst`` from state ``a`` to ``b`` that began at ``t0`` and ends now,
    with the run queue's length and CTL[INFLIGHT] as it ends; returns its row.

    Three relaxed loads and two stores into the row the poll takes anyway: no atomic of
    their own (state.py, Trace). The head is read before the tail: both only grow and the
    head never passes the tail, so the length read is never below 0 where the loads keep
    their order (the host clamps a reading skewed by other executors)."""
    k = trace_event(trace, sched.CTL, TRACE_POLL, w, inst, a, b, t0, now_ns(), c)
    if k < trace.shape[0]:
        head = ld(sched.QHT, HEAD)
        trace[k, TR_QUEUE] = ld(sched.QHT, TAIL) - head
        trace[k, TR_INFLIGHT] = ld(sched.CTL, CTL_INFLIGHT)
    return k


@linked.device
def trace_occupancy(trace, k, j, chan, c):  # type: ignore[no-untyped-def]
    """Into row ``k`` (a poll's, from trace_poll), the values channel ``c`` holds now: its
    tail less its head (send and receive tickets taken), as the poll's task's ``j``-th
    channel. Two relaxed loads, head first, as in trace_poll."""
    if k < trace.shape[0]:
        head = ld(chan.CHHT, (c, HEAD))
        trace[k, TR_CHANNELS + j] = ld(chan.CHHT, (c, TAIL)) - head


@linked.device
def wake_traced(sched, qmask, trace, w, waker, inst):  # type: ignore[no-untyped-def]
    t = now_ns()
    trace_event(trace, sched.CTL, TRACE_WAKE, w, inst, waker, 0, t, t, 0)
    wake(sched, qmask, inst)
