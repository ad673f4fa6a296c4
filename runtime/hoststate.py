"""A run's device state as host arrays, by name (runtime/state.py's), before they are
copied to the device: every array's shape and initial words for a program and a count of
executors, and G, the kernel's one argument, built from them. launch.py allocates and
launches from these; prepared.py keeps them between runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from gasync.codegen import JOB_SLOTS, Generated
from gasync.runtime import buffers
from gasync.runtime.state import (
    CMD_WORDS,
    CREDIT_RUN,
    CTL_WORDS,
    EVENT_WORDS,
    EXS_INITIAL,
    EXS_WORDS,
    GROUPS,
    JOB_WORDS,
    RING_WORDS,
    SLOT_WORDS,
    STAT_WORDS,
    Cmd,
    Ctl,
    Sched,
)


def ticket_words(instances_ring: int) -> int:
    """Words of a channel's ticket table (CTW): a power of two past every ticket that can be
    registered and not yet looked at. A holder holds one ticket at a time and a deferring
    sender looks once per credit read, so those tickets lie in [CHECKED, HEAD), at most the
    receivers (below the run queue's capacity, ``instances_ring``) past the tail, which is at
    most CREDIT_RUN past CHECKED. A table of the instances alone let a slow holder's word be
    overwritten by a holder of a ticket one table later, before the look that would wake it."""
    return 1 << (instances_ring + CREDIT_RUN - 1).bit_length()


def _slot_lines(channels: int, slots: int) -> np.ndarray[Any, Any]:
    """CSEQ: each slot's sequence on its own 128-byte line (``SLOT_WORDS`` apart), so that the
    waiters of one slot never queue behind those of another; slot i waits for send ticket i."""
    seq = np.zeros((channels, slots * SLOT_WORDS), np.int64)
    seq[:, ::SLOT_WORDS] = 2 * np.arange(slots, dtype=np.int64)
    return seq


def host_arrays(gen: Generated, executors: int, inputs: dict[str, Any], trace_capacity: int = 1) -> dict[str, Any]:
    """Every array of G by its name, initialised, on the host (inputs may already be device arrays)."""
    plan = gen.plan
    n = max(plan.instances, 1)
    cap = gen.queue_capacity
    ni, nf = gen.frame_words
    pi, pf = gen.pargs
    counts = {t.name: t.count for t in plan.tasks}
    pred = [sum(counts[p] for p in t.after) for t in plan.tasks]  # per task: predecessors' instances
    ctl = np.zeros(CTL_WORDS, np.int64)
    # ready fresh instances: those of every task with no predecessor instance to wait for, which
    # includes a task after only empty ones (`task a for k in 0..0`): no completion counts it later
    ctl[Ctl.INFLIGHT] = sum(t.count for t, p in zip(plan.tasks, pred, strict=True) if p == 0)
    ctl[Ctl.EXECUTORS] = executors
    r = max(gen.resources, 1)
    c = max(len(plan.channels), 1)
    chcap = max([1, *(ch.capacity for ch in plan.channels)])
    s = max(len(plan.signals), 1)
    jobs = n * gen.job_width if gen.jobargs != (0, 0) else 1
    ji, jf = gen.jobargs if gen.jobargs != (0, 0) else (1, 1)
    arrays: dict[str, Any] = {
        "FI": np.zeros(ni, np.int64),
        "FF": np.zeros(nf, np.float64),
        "ST": np.full(n, int(Sched.FRESH), np.int32),
        "QSEQ": np.arange(cap, dtype=np.int64),
        "QDATA": np.zeros(cap, np.int32),
        "QHT": np.zeros(RING_WORDS, np.int64),
        "CTL": ctl,
        "CMD": _rows(executors, CMD_WORDS, {Cmd.COMMAND: 0, Cmd.JOB: -1}),
        "EXS": _rows(executors, EXS_WORDS, EXS_INITIAL),
        "PARGS_I": np.zeros((executors, pi), np.int64),
        "PARGS_F": np.zeros((executors, pf), np.float64),
        "SIG": np.zeros(s, np.int32),
        "STATS": np.zeros((executors, STAT_WORDS), np.int64),
        "CURSOR": np.zeros(max(len(plan.tasks), 1), np.int64),
        "PRED": np.array(pred or [0], np.int64),
        "SCRATCH_I": np.zeros(executors, np.int64),
        "SCRATCH_F": np.zeros(executors, np.float64),
        "WSEQ": np.tile(np.arange(cap, dtype=np.int64), (r, 1)),
        "WDATA": np.zeros((r, cap), np.int32),
        "WHT": np.zeros((r, RING_WORDS), np.int64),
        "WREG": np.zeros(r * n, np.int32),
        "WAITON": np.zeros(n, np.int32),
        "CSEQ": _slot_lines(c, chcap),
        "CHI": np.zeros((c, chcap), np.int64),
        "CHF": np.zeros((c, chcap), np.float64),
        "CHHT": np.zeros((c, RING_WORDS), np.int64),
        "CHCLOSED": np.zeros(c, np.int32),
        "CTW": np.zeros((c, ticket_words(cap)), np.int32),
        "HOSTSIG": np.zeros(s, np.int32),
        "HOSTPEND": np.zeros(s, np.int32),
        "SSEQ": np.arange(cap, dtype=np.int64),
        "SDATA": np.zeros(cap, np.int32),
        "SHT": np.zeros(RING_WORDS, np.int64),
        "UNTIL": np.zeros(n, np.int64),
        "JOB": np.zeros((jobs, JOB_WORDS), np.int64),
        "JOBARGS_I": np.zeros((jobs, ji), np.int64),
        "JOBARGS_F": np.zeros((jobs, jf), np.float64),
        "JOBSLOTS": np.full(JOB_SLOTS, -1, np.int64),
        "TRACE": np.zeros((trace_capacity, gen.trace_words) if gen.trace else (1, EVENT_WORDS), np.int64),
    }
    for b in plan.buffers:
        arrays[f"B_{b.name}"] = inputs[b.name] if b.init == "input" else buffers.initial(b)
    for sh in plan.shared:
        word = np.int32 if sh.ty == "bool" else buffers.dtype_of(sh.ty)  # atomics need a word, not a bool
        arrays[f"S_{sh.name}"] = np.array([sh.init], word)
    return arrays


def device_state(module: Any, arrays: dict[str, Any]) -> Any:
    """G, the kernel's one argument, from every array by its name: the generated module's
    ``State`` of runtime/state.py's groups, then the trace and the program's own arrays."""
    groups = [group(*(arrays[name] for name in group._fields)) for _, group in GROUPS]
    rest = [arrays[name] for name in module.State._fields[len(GROUPS) :]]
    return module.State(*groups, *rest)


def _rows(n: int, width: int, initial: dict[Any, int]) -> np.ndarray[Any, Any]:
    """``n`` rows of ``width`` int64 words, the named columns set to their initial values."""
    row = np.zeros(width, np.int64)
    for col, value in initial.items():
        row[col] = value
    return np.tile(row, (n, 1))
