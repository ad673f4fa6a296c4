"""The executor's task tables and bulk jobs, read by runtime/deviceexec.py's loop (and by the
generated spin executor and group kernel, through ``dx``): the claim of fresh instances, an
instance's end, and the chunks of a posted ``bulk for``. The tables are the program's own
constant arrays (codegen/tasktable.py writes them), arguments of fixed types, so these helpers
are compiled once for every program (runtime/linked.py) like the loop.

``TASKS`` has a row per task in the plan's order (``TASK_*``); ``SUCC`` holds each task's
successors as a list ended by -1 (a row's ``TASK_SUCC`` is where its list starts; index 0 is a
lone -1, every task's with no successor). The instances of a task that may start are claimed in
chunks, one atomic on its cursor; an instance's end lowers each successor's predecessor counter.
"""

from __future__ import annotations

from numba import int64

from gasync.runtime import devicelib as dl
from gasync.runtime import linked
from gasync.runtime.words import (
    CMD_JOB,
    CTL_DONE,
    CTL_EXECUTORS,
    CTL_EXIT,
    CTL_INFLIGHT,
    EXIT_OK,
    JOB_CHUNK,
    JOB_CHUNKS,
    JOB_DONE,
    JOB_HI,
    JOB_LO,
    JOB_LOOP,
    JOB_NEXT,
    JOB_PARENT,
)

# TASKS: a row per task, in the plan's order
TASK_FIRST, TASK_COUNT, TASK_SUCC, TASK_CLAIMED = range(4)  # (SUCC: where its list starts; CLAIMED: 0 for a group's)
TASK_WORDS = 4

DONE_BATCH = 256  # finished instances counted with one atomic (flush_done)


@linked.device
def _count(done, sched):  # type: ignore[no-untyped-def]
    """DONE up by ``done`` finished instances, then in flight down with release order: the
    deadlock check that reads in flight at 0 (then a fence) then reads DONE sees this batch in
    it. (Both relaxed, the two adds could land in either order, one line each in its own L2
    slice; run 106's B1 read in flight 0 with DONE short and reported a deadlock of a run whose
    every task had finished.) Returns DONE before the batch."""
    before = dl.add(sched.CTL, CTL_DONE, done)
    dl.add_release(sched.CTL, CTL_INFLIGHT, -done)
    return before


@linked.device
def flush_done(done, sched):  # type: ignore[no-untyped-def]
    """Count ``done`` finished instances: one atomic per batch, not per instance (_count)."""
    _count(done, sched)
    return int64(0)


@linked.device
def count_done(done, sched, total):  # type: ignore[no-untyped-def]
    """flush_done, and the run's end (``Exit.OK``) where this batch finished its last instance
    (of ``total``): the idle executors see the end in EXIT, a word none of them writes, without
    each reading DONE, which the batches' atomics write."""
    if _count(done, sched) + done >= total:
        dl.cas(sched.CTL, CTL_EXIT, int64(0), int64(EXIT_OK))
    return int64(0)


@linked.device
def task_of(inst, TASKS):  # type: ignore[no-untyped-def]
    """The task of instance ``inst`` (0 where none has it)."""
    for t in range(TASKS.shape[0]):
        if TASKS[t, TASK_FIRST] <= inst < TASKS[t, TASK_FIRST] + TASKS[t, TASK_COUNT]:
            return int64(t)
    return int64(0)


@linked.device
def complete(inst, sched, TASKS, SUCC):  # type: ignore[no-untyped-def]
    """Instance ``inst`` has finished: each successor of its task has one predecessor less, and
    one whose last predecessor this was may start (its instances count in flight). The executor
    counts finished instances in batches (flush_done)."""
    k = TASKS[task_of(inst, TASKS), TASK_SUCC]
    while SUCC[k] >= 0:  # (a list ended by -1, not a count: NVVM would unroll a counted loop)
        s = SUCC[k]
        k += 1
        # acquire-release: the last predecessor's decrement carries every predecessor's writes to
        # claim's acquire of PRED (a task with no successor needs none: the kernel's end
        # publishes its writes to the host)
        if dl.add_acq_rel(sched.PRED, s, int64(-1)) == 1:
            dl.add(sched.CTL, CTL_INFLIGHT, TASKS[s, TASK_COUNT])


@linked.device
def claim(sched, TASKS):  # type: ignore[no-untyped-def]
    """(lo, hi, left): a range of fresh instances of a task that may start (or an empty one), and
    whether any task still has unclaimed instances (0 once all are taken).

    A claim takes a quarter of a fair share (count / executors), at least 1 and at most 1024
    (one instance where a task has fewer than 64): large tasks are claimed with few atomics on
    their cursor (one counter that every executor hits), small ones still spread over many warps."""
    CURSOR, PRED = sched.CURSOR, sched.PRED
    left = int64(0)
    for t in range(TASKS.shape[0]):
        count = TASKS[t, TASK_COUNT]
        if TASKS[t, TASK_CLAIMED] == 0 or dl.ld(CURSOR, t) >= count:
            continue
        left = int64(1)
        # the acquire of PRED pairs with complete's decrements: the predecessors' writes
        if dl.ld_acquire(PRED, t) == 0:
            n = int64(1)
            if count >= 64:
                n = max(int64(1), min(int64(1024), count // (4 * sched.CTL[CTL_EXECUTORS])))
            lo = dl.add(CURSOR, t, n)
            if lo < count:
                first = TASKS[t, TASK_FIRST]
                return first + lo, first + min(lo + n, count), int64(1)
    return int64(0), int64(0), left


@linked.device
def bulk_claim(w, exe, jobs):  # type: ignore[no-untyped-def]
    """Take one chunk of a posted bulk job for warp ``w``: returns its loop's id, or 0."""
    JOB, JOBSLOTS = jobs.JOB, jobs.JOBSLOTS
    for s in range(JOBSLOTS.shape[0]):
        j = dl.ld_acquire(JOBSLOTS, s)  # pairs with bulk_post's release: the job's fields and arguments
        if j >= 0:
            c = dl.add(JOB, (j, JOB_NEXT), int64(1))
            if c < dl.ld(JOB, (j, JOB_CHUNKS)):
                chunk = dl.ld(JOB, (j, JOB_CHUNK))
                lo = dl.ld(JOB, (j, JOB_LO)) + c * chunk
                exe.PARGS_I[w, 0] = lo
                end = dl.ld(JOB, (j, JOB_HI))
                exe.PARGS_I[w, 1] = lo + chunk if end - lo > chunk else end  # no lo + chunk past 2^63 - 1
                exe.CMD[w, CMD_JOB] = j
                return dl.ld(JOB, (j, JOB_LOOP))
    return int64(0)


@linked.device
def bulk_chunk_done(j, jobs):  # type: ignore[no-untyped-def]
    """After a warp ran a chunk of job ``j``: the instance to wake where it was the job's last
    chunk (its waiting task), else -1. The lanes met at warp_sync after their stores, so lane 0's
    acquire-release add carries them; the last chunk's add acquires every other chunk's, and the
    wake releases them all to the parent's next poll."""
    JOB, JOBSLOTS = jobs.JOB, jobs.JOBSLOTS
    if dl.add_acq_rel(JOB, (j, JOB_DONE), int64(1)) == dl.ld(JOB, (j, JOB_CHUNKS)) - 1:
        for s in range(JOBSLOTS.shape[0]):
            dl.cas(JOBSLOTS, s, j, int64(-1))
        return dl.ld(JOB, (j, JOB_PARENT))
    return int64(-1)
