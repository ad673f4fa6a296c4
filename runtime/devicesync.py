"""Device helpers for waiting: wait lists, channels, signals, sleepers, bulk jobs.

Wait lists. A *resource* is something a task can wait for: a signal (id k),
a channel's receive side (S + 2c) or its send side (S + 2c + 1), with S the
number of signals. Each resource has a ring of waiting instances (the same
sequence-numbered ring as the run queue, one row of WSEQ/WDATA/WHT per
resource) and a flag per (resource, instance) in WREG so an instance is in a
ring at most once. A future that cannot complete registers, *then checks its
condition again* (so a wake that came between the first check and the
registration is not lost), and only then returns PENDING. Whoever changes the
resource wakes every waiter in its ring; a woken future re-checks and may
register again. WAITON[inst] remembers the last resource an instance waited
on, for deadlock reports.

Channels (their helpers are in devicechan.py, re-exported here) are bounded rings of
exactly ``capacity`` slots (indices modulo the
capacity, sequence numbers per slot), values kept as int64 or float64 bits.
Signals are words of SIG; the host sets one through host-mapped memory
(HOSTSIG), which executors poll with a system-scope acquire load at a bounded
rate. Sleepers are kept in one ring and re-checked by idle executors.

A helper that works on several arrays of one of state.py's groups takes the
group (``G.wait``, ``G.chan``, ``G.sleep``, ``G.jobs``, and ``G.sched`` to wake
an instance); one that works on a single array takes that array.
"""

from __future__ import annotations

from numba import cuda, int32, int64, uint64

from gasync.runtime import linked
from gasync.runtime.devicechan import (  # noqa: F401  (the generated code calls them through dsync)
    CALM_RECV,
    CALM_SEND,
    FLAGGED,
    NO_FREE,
    OPEN,
    PREREAD,
    RECV_NONE,
    RECV_TOOK,
    SEND_CLOSED,
    SEND_DONE,
    SEND_FULL,
    SEND_WAKE,
    SEQ_MASK,
    WAIT_BIT,
    chan_can_recv,
    chan_can_send,
    chan_closed,
    chan_free,
    chan_look,
    chan_put,
    chan_take,
    chan_try_recv,
    chan_try_send,
    counted_room,
    counted_take,
    halves_carry,
    joined,
    ring_me,
    spin_look,
)
from gasync.runtime.devicecredit import (  # noqa: F401  (the generated code calls them through dsync)
    credited_put,
    credited_send,
    forget_credit,
    put_credited,
)
from gasync.runtime.devicelib import SIM, ld, now_ns, queue_pop, queue_pop_before, queue_push, wake
from gasync.runtime.devicetickets import (  # noqa: F401  (the generated code calls them through dsync)
    chan_take_ticket,
    look_for_holders,
    ticket_ended,
    ticket_wait,
    wake_tickets,
)
from gasync.runtime.order import (
    add,
    add_release,
    cas,
    cas_release,
    exch,
    exch_release,
)
from gasync.runtime.words import (  # noqa: F401  (CTL_EXECUTORS and CTL_CLOSED_SENDS are read by generated code)
    CTL_CLOSED_SENDS,
    CTL_EXECUTORS,
    CTL_INFLIGHT,
    CTL_JOB_EPOCH,
    CTL_TRACE_N,
    EXIT_SLEEPERS_FULL,
    EXIT_WAITLIST_FULL,
    HEAD,
    JOB_CHUNK,
    JOB_CHUNKS,
    JOB_DONE,
    JOB_HI,
    JOB_LO,
    JOB_LOOP,
    JOB_NEXT,
    JOB_PARENT,
    JOB_SLOT,
    TAIL,
)

if SIM:

    def load_acquire_sys(arr, i):  # type: ignore[no-untyped-def]
        return int32(arr[i])

else:
    from llvmlite import ir as llvm_ir
    from numba import types
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    @intrinsic
    def _ld_acquire_sys(typingctx, arr, idx):  # type: ignore[no-untyped-def]
        sig = types.int32(arr, idx)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
            fty = llvm_ir.FunctionType(llvm_ir.IntType(32), [ptr.type])
            asm = llvm_ir.InlineAsm(fty, "ld.acquire.sys.global.u32 $0, [$1];", "=r,l", side_effect=True)
            return builder.call(asm, [ptr])

        return sig, codegen

    @cuda.jit(device=True, inline=True)
    def load_acquire_sys(arr, i):  # type: ignore[no-untyped-def]
        return _ld_acquire_sys(arr, int64(i))


# ---- wait lists ---------------------------------------------------------------


# A waiter's flag WREG[r * n + inst]: 0 not on r's list, 1 waiting (on the list),
# 2 on the list but no longer waiting (its await completed: a stale entry that wakers
# skip). An instance is on a list at most once, so a list never holds more than n.
REG_WAITING = 1
REG_STALE = 2


@linked.device
def register(wait, n, wmask, r, inst, ctl):  # type: ignore[no-untyped-def]
    """Put ``inst`` on resource ``r``'s wait list (once); ``wait`` is G.wait (state.WaitLists)."""
    wait.WAITON[inst] = r + 1
    k = r * n + inst
    while True:
        old = cas(wait.WREG, k, int32(0), int32(REG_WAITING))
        if old == 0:
            queue_push(wait.WSEQ[r], wait.WDATA[r], wait.WHT[r], wmask, inst, ctl, EXIT_WAITLIST_FULL)
            return
        if old == REG_WAITING:
            return
        if cas(wait.WREG, k, int32(REG_STALE), int32(REG_WAITING)) == REG_STALE:
            return  # its old entry is still on the list: it counts again


@linked.device
def deregister(wreg, n, r, inst):  # type: ignore[no-untyped-def]
    """``inst``'s await that may have registered on ``r`` completed: mark its entry stale.

    Returns the flag it found: 1 if it was still waiting; 0 if it never registered or a
    waker took it off the list (and so spent a wake on it, which it may have to pass on)."""
    return cas(wreg, r * n + inst, int32(REG_WAITING), int32(REG_STALE))


@linked.device
def next_waiter(wait, n, wmask, r, end):  # type: ignore[no-untyped-def]
    """Take the next waiting instance off resource ``r``'s wait list (one registered
    before ticket ``end``), skipping stale entries, and clear its flag, so it may
    register again; -1 when there is none."""
    while True:
        inst = queue_pop_before(wait.WSEQ[r], wait.WDATA[r], wait.WHT[r], wmask, end)
        if inst < 0:
            return inst
        if exch(wait.WREG, r * n + inst, int32(0)) == REG_WAITING:
            return inst


@linked.device
def wake_waiters(sched, qmask, wait, n, wmask, r, most):  # type: ignore[no-untyped-def]
    """Wake up to ``most`` instances waiting on resource ``r``, oldest first.

    Only those waiting when the call starts: a woken instance that finds nothing
    and registers again must not be woken again by this same call, or waker and
    waiters chase each other for ever (seen on the GPU with one sender and many
    receivers). ``most`` is 1 for a channel's value or free slot, which one waiter
    can use: waking them all made every send poll every receiver (B4 on the H200:
    515 receivers, 2 s). The woken one tries ``r`` again, as its await has not
    completed (its entry would be stale otherwise); one that completes without
    using what it was woken for passes the wake on (codegen/machine.py chan_done).
    """
    end = ld(wait.WHT, (r, TAIL))
    for _ in range(most):
        inst = next_waiter(wait, n, wmask, r, end)
        if inst < 0:
            return
        wake(sched, qmask, inst)


# ---- signals ------------------------------------------------------------------


@linked.device
def set_signal(sig, k):  # type: ignore[no-untyped-def]
    """Set signal ``k``; True if this call set it, so its waiters must be woken.

    The release pairs with ``signal_is_set``'s acquire: what was written before is
    visible to a task that sees the signal set."""
    return exch_release(sig, k, int32(1)) == 0


@linked.device
def host_signal_pending(signals, k):  # type: ignore[no-untyped-def]
    """True while the host has scheduled signal ``k`` and it has not arrived (``signals``:
    G.signals, state.Signals)."""
    return signals.HOSTPEND[k] != 0 and ld(signals.SIG, k) == 0


# ---- sleepers -----------------------------------------------------------------


@linked.device
def sleep_register(sleep, smask, ctl, inst, deadline):  # type: ignore[no-untyped-def]
    """Put a running instance on the sleepers' ring (``sleep``: G.sleep, state.Sleepers)
    until ``deadline``.

    A sleeper counts in CTL_INFLIGHT, as it will wake by itself: the deadlock check
    must not see it as stuck. It is counted here, while its poll still counts it, and
    uncounted only after its wake counted it again, so that the count of a live
    instance never drops to zero in between (two counters, one for sleepers, could
    not be read together without that gap: the GPU found it).

    An instance already on the ring keeps the earlier deadline: a select over two sleeps
    registers both, and must wake at the first (a stale later one gives way to a new earlier
    one). If the ring took the instance off meanwhile (the word became 0: it is being woken
    for the earlier deadline), the CAS leaves it so, and the wake's poll registers again."""
    old = exch(sleep.UNTIL, inst, deadline)
    if old == 0:
        add(ctl, CTL_INFLIGHT, int64(1))
        queue_push(sleep.SSEQ, sleep.SDATA, sleep.SHT, smask, inst, ctl, EXIT_SLEEPERS_FULL)
    elif old < deadline:
        cas(sleep.UNTIL, inst, deadline, old)


@linked.device
def due_sleeper(sleep, smask, ctl, t):  # type: ignore[no-untyped-def]
    """Take one sleeper off the ring: its id if it is due at time ``t`` (it no longer
    sleeps; the caller wakes it, then takes it off CTL_INFLIGHT), -2 if it is not due
    (it went back on the ring), -1 if the ring is empty."""
    inst = queue_pop(sleep.SSEQ, sleep.SDATA, sleep.SHT, smask)
    if inst < 0:
        return int64(-1)
    if ld(sleep.UNTIL, inst) <= t:
        exch(sleep.UNTIL, inst, int64(0))
        return int64(inst)
    queue_push(sleep.SSEQ, sleep.SDATA, sleep.SHT, smask, inst, ctl, EXIT_SLEEPERS_FULL)
    return int64(-2)


@linked.device
def wake_sleepers(sched, qmask, sleep, smask, budget):  # type: ignore[no-untyped-def]
    """Look at up to ``budget`` sleepers: wake the due ones, put the others back."""
    t = now_ns()
    for _ in range(budget):
        inst = due_sleeper(sleep, smask, sched.CTL, t)
        if inst == -1:
            return
        if inst >= 0:
            wake(sched, qmask, inst)
            add(sched.CTL, CTL_INFLIGHT, int64(-1))  # no longer asleep (see sleep_register)


# ---- bulk jobs ----------------------------------------------------------------
BULK_CHUNKS_PER_EXECUTOR = 1  # was 4 (chunks handed out dynamically); bench/NOTES.md has both
# JOB[j] holds the state.Job columns. JOBSLOTS holds the ids of active jobs (-1: free);
# CTL[JOB_EPOCH] moves on every post, so an idle executor scans the slots only when it
# moved. A job's id is a row of its parent instance's: the instance itself where it
# waits for one job at a time, else one of its codegen.jobs rows (a join of futures that
# each run a bulk for).


@linked.device
def bulk_post(jobs, ctl, j, parent, gid, lo, hi, executors):  # type: ignore[no-untyped-def]
    """Create job ``j`` over lo..hi for instance ``parent`` (``jobs``: G.jobs, state.BulkJobs);
    returns False if every slot is taken."""
    job = jobs.JOB
    jobslots = jobs.JOBSLOTS
    # the iterations (unsigned: a u64 range's words, or an i64 range, may be 2^63 or more
    # apart), at most 2^62: a loop that long never ends anyway, but it must not look empty
    n = int64(0) if hi <= lo else int64(min(uint64(hi) - uint64(lo), uint64(1 << 62)))
    # one contiguous range per executor (the mapping measured fastest: a warp streams one
    # range, as bench/baselines.py's per-warp contiguous kernel), in whole turns of a vector
    # map (512 elements: 16 per lane, codegen/parallel.py), so every chunk of an aligned
    # range starts on a 16-byte line
    chunk = max(int64(512), ((n // (executors * BULK_CHUNKS_PER_EXECUTOR)) + 511) // 512 * 512)
    chunks = (n + chunk - 1) // chunk
    job[j, JOB_LOOP] = gid
    job[j, JOB_LO] = lo
    job[j, JOB_HI] = hi
    job[j, JOB_CHUNK] = chunk
    job[j, JOB_CHUNKS] = chunks
    job[j, JOB_NEXT] = 0
    job[j, JOB_DONE] = 0
    job[j, JOB_PARENT] = parent
    if chunks == 0:
        return True
    for s in range(jobslots.shape[0]):
        # releases the job's fields and arguments to the claimers' acquire of the slot
        if cas_release(jobslots, s, int64(-1), int64(j)) == -1:
            job[j, JOB_SLOT] = s
            add(ctl, CTL_INFLIGHT, int64(1))
            add_release(ctl, CTL_JOB_EPOCH, int64(1))  # after the slot: whoever sees it moved, sees the slot
            return True
    return False


@linked.device
def bulk_done(job, j):  # type: ignore[no-untyped-def]
    return ld(job, (j, JOB_DONE)) >= job[j, JOB_CHUNKS]


@linked.device
def bulk_rows_done(job, j, n):  # type: ignore[no-untyped-def]
    """Whether jobs ``j .. j + n - 1`` have all finished (a row never posted has)."""
    for r in range(n):
        if ld(job, (j + r, JOB_DONE)) < job[j + r, JOB_CHUNKS]:
            return False
    return True


# ---- tracing (runtime/devicetrace.py; these two need the waiters' and sleepers' rings) ----

from gasync.runtime.devicetrace import (  # noqa: E402, F401  (the generated code calls these through dsync)
    trace_event,
    trace_occupancy,
    trace_poll,
    wake_traced,
)


@linked.device
def wake_waiters_traced(sched, qmask, wait, n, wmask, r, most, trace, w, waker):  # type: ignore[no-untyped-def]
    end = ld(wait.WHT, (r, TAIL))  # only those waiting now (see wake_waiters)
    for _ in range(most):
        inst = next_waiter(wait, n, wmask, r, end)
        if inst < 0:
            return
        wake_traced(sched, qmask, trace, w, waker, inst)


@linked.device
def wake_sleepers_traced(sched, qmask, sleep, smask, budget, trace, w):  # type: ignore[no-untyped-def]
    t = now_ns()
    for _ in range(budget):
        inst = due_sleeper(sleep, smask, sched.CTL, t)
        if inst == -1:
            return
        if inst >= 0:
            wake_traced(sched, qmask, trace, w, int64(-1), inst)
            add(sched.CTL, CTL_INFLIGHT, int64(-1))  # no longer asleep (see sleep_register)
