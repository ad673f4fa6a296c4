"""Device helpers that generated kernels call, with a simulator version of each.

The generated module is the same text for both backends; only this layer
differs. On the GPU it uses PTX through small ``@intrinsic`` functions
(``%globaltimer``, ``nanosleep``) and atomics for every load that must not
be hoisted out of a spin loop (gpu-notes: a plain load in a spin loop is
read once). Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, decided
by the process before Numba is imported) these are Python functions: the
clock is ``perf_counter_ns`` and a pause is ``time.sleep``, which also gives
the other simulated threads the GIL.

Memory orders and every read-modify-write go through runtime/order.py (one
lock for all of them in the simulator); the words and their protocols are named
in runtime/state.py. The run queue is a bounded multi-producer multi-consumer
ring (state.py describes it). Each task instance is in the queue at most once
(its scheduling state says so), so a ring as large as the number of instances
never fills; if it did, the run stops with its own exit code.
"""

from __future__ import annotations

import time

from numba import config, cuda, int32, int64, uint64

from gasync.runtime import linked
from gasync.runtime.devicemath import (  # noqa: F401
    TURNS_BELOW,
    f2i,
    f2u,
    fdiv,
    fmax,
    fmin,
    idiv,
    irem,
    lane_start,
    short_span,
    u64_span,
    u64_word,
    word_u64,
)
from gasync.runtime.devicewarp import (  # noqa: F401  (dl.*)
    first,
    forget_warps,
    lanes_ordered,
    shfl_down,
    warp_command,
    warp_sync,
)
from gasync.runtime.order import (  # noqa: F401  (the generated code calls these through dl)
    INLINE,
    PROGRAM_INLINE,
    aand,
    add,
    add_acq_rel,
    add_release,
    amax,
    amin,
    ananmax,
    ananmin,
    aor,
    cas,
    cas_acq_rel,
    cas_release,
    exch,
    exch_release,
    fence_acquire,
    fence_sc,
    ld_acquire,
    ld_relaxed,
    st_release,
    sub,
)
from gasync.runtime.state import (  # noqa: F401  (the generated code reads these through dl)
    CMD_EXIT,
    GAVE_UP,
    HALF_HI,
    HALF_LO,
    SLOT_WORDS,
)
from gasync.runtime.words import (  # noqa: F401  (the generated code reads these through dl)
    CMD_COMMAND,
    CMD_JOB,
    CTL_DEADLINE,
    CTL_DETAIL,
    CTL_DONE,
    CTL_EXECUTORS,
    CTL_EXIT,
    CTL_INFLIGHT,
    DONE,
    EXIT_DEADLOCK,
    EXIT_OK,
    EXIT_QUEUE_FULL,
    EXIT_TIMEOUT,
    EXS_BACKOFF,
    EXS_DONE,
    EXS_EPOCH,
    EXS_FRESH,
    EXS_HI,
    EXS_IDLE,
    EXS_LO,
    EXS_POLLS,
    EXS_RESUME,
    EXS_SPIN,
    EXS_START,
    FRESH,
    HEAD,
    IDLE,
    NOTIFIED,
    QUEUED,
    RUNNING,
    STAT_ELAPSED_NS,
    STAT_END_NS,
    STAT_IDLE,
    STAT_POLLS,
    STAT_SMID,
    STAT_SPUN,
    TAIL,
)

SIM = bool(config.ENABLE_CUDASIM)
# loop turns between a long loop's looks at the run's exit word and deadline (``overdue``):
# the simulator's threads turn ~10,000 times slower, and --timeout must still end its runs soon
STOP_EVERY = 64 if SIM else 4096
STOP_MASK = STOP_EVERY - 1  # (a power of two: a count of turns, never negative, looks when its low bits are 0)
# pending polls of a pinned group task between its looks at the timers, the host, the run's exit
# and deadline (codegen/groupkernel.py): a poll that waits is microseconds on the GPU, and on the
# simulator up to a second (its lanes are 32 Python threads that meet at each try)
SPIN_LOOK_EVERY = 1 if SIM else 64
# how long a push waits for a slot of a full ring before it reports the ring full (a slot
# is busy only while a consumer is between its take and its release: nanoseconds on the
# GPU, but a simulated thread can wait a long time for the GIL there)
FULL_NS = 2_000_000_000 if SIM else 100_000_000
# how long a channel await waits in place before it suspends (state.py, Waiting in place):
# long against a hand-off (microseconds on the GPU) and against a stage of a pipeline waiting
# for its next value, short against a person waiting for a deadlock report
SPIN_NS = 2_000_000 if SIM else 1_000_000
# B2's critical path found by delay (scripts/handoff_probe.py --set runtime.devicelib.PROBE_...=N):
# N cycles of busy wait put into one segment of every wait in place. A segment with slack absorbs
# them; one on the hand-off's critical path adds them to it. 0, as everywhere but in a probe: no code.
PROBE_WAIT_CYCLES = 0  # as the wait begins: the re-entry of a side that has just published
PROBE_SEEN_CYCLES = 0  # as it sees what it waits for: the path from seeing to publishing the reply

if SIM:
    from gasync.runtime import simblock

    def now_ns() -> int:
        simblock.check()  # (a thread of the block failed: this one ends too)
        return int64(time.perf_counter_ns())

    def pause(ns: int) -> None:
        # Simulated threads share the GIL: a waiter must really sleep, or it
        # starves the one thread with work. Scaled so the longest back-off
        # (4096 "ns") is about a millisecond.
        simblock.check()
        time.sleep(min(int(ns), 8192) * 250e-9)

    def ld(arr, i):  # type: ignore[no-untyped-def]
        return arr[i]

    def smid() -> int:
        return 0

    def delay_cycles(n: int) -> None:
        pass

else:
    from llvmlite import ir as llvm_ir
    from numba import types
    from numba.cuda.extending import intrinsic

    def _special_register(name: str, bits: int):  # type: ignore[no-untyped-def]
        """An intrinsic that reads PTX special register ``%name`` (``bits`` wide, unsigned)."""

        @intrinsic
        def read(typingctx):  # type: ignore[no-untyped-def]
            def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
                fty = llvm_ir.FunctionType(llvm_ir.IntType(bits), [])
                kind, reg = ("u64", "l") if bits == 64 else ("u32", "r")
                asm = llvm_ir.InlineAsm(fty, f"mov.{kind} $0, %{name};", f"={reg}", side_effect=True)
                return builder.call(asm, [])

            return (types.uint64 if bits == 64 else types.uint32)(), codegen

        return read

    _globaltimer = _special_register("globaltimer", 64)
    _smid = _special_register("smid", 32)
    _clock64 = _special_register("clock64", 64)

    @INLINE
    def now_ns() -> int:
        return int64(_globaltimer())

    @INLINE
    def smid() -> int:
        """The SM the calling thread runs on."""
        return int64(_smid())

    @INLINE
    def delay_cycles(n: int) -> None:
        """Busy for ``n`` of this SM's cycles (PROBE_WAIT_CYCLES, PROBE_SEEN_CYCLES)."""
        t0 = _clock64()
        while _clock64() - t0 < uint64(n):
            pass

    @INLINE
    def pause(ns: int) -> None:
        cuda.nanosleep(uint64(ns))

    @INLINE
    def ld(arr, i):  # type: ignore[no-untyped-def]
        """Read an integer word that other SMs write: a relaxed load at GPU scope, served
        by L2 (never a stale L1 line) and never hoisted out of a loop, without taking an
        atomic unit's turn as an atomic add of zero did."""
        return ld_relaxed(arr, i)


@INLINE
def atomic_load(arr):  # type: ignore[no-untyped-def]
    """Read word 0 of ``arr`` with an atomic, so the read stays in spin loops."""
    return add(arr, 0, arr.dtype.type(0)) if SIM else cuda.atomic.add(arr, 0, 0)


@INLINE
def deadline_after(ns):  # type: ignore[no-untyped-def]
    """The device time ``ns`` (a u64) from now, held at the largest time where the sum would pass
    it: a sleep that long never ends (it would wrap round to the past and end at once)."""
    now = now_ns()
    latest = int64(9223372036854775807)
    return latest if uint64(ns) >= uint64(latest - now) else now + int64(ns)


@INLINE
def float_load(arr, minus_zero):  # type: ignore[no-untyped-def]
    """Read word 0 of a float ``arr`` with an atomic that leaves it as it is: ``x + -0.0`` is ``x``
    for every x (``x + 0.0`` would turn a stored -0.0 into +0.0)."""
    return add(arr, 0, minus_zero) if SIM else cuda.atomic.add(arr, 0, minus_zero)


@INLINE
def atomic_store(arr, value):  # type: ignore[no-untyped-def]
    exch(arr, 0, value)


@INLINE
def float_store(arr, value):  # type: ignore[no-untyped-def]
    """Store a float in word 0: aligned stores are single-copy atomic, and there is no float exch."""
    arr[0] = value
    cuda.threadfence()


@INLINE
def past_deadline(ctl, start, timeout_ns):  # type: ignore[no-untyped-def]
    """True (and the run's exit code set to TIMEOUT) once ``timeout_ns`` has passed since ``start``."""
    if timeout_ns > 0 and now_ns() - start > timeout_ns:
        cas(ctl, CTL_EXIT, int64(0), int64(EXIT_TIMEOUT))
        return True
    return False


@INLINE
def chunk_end(c, stop):  # type: ignore[no-untyped-def]
    """Where a chunked range loop's chunk that starts at ``c`` (< ``stop``) ends: STOP_EVERY turns
    on, or at ``stop``; measured as an unsigned distance, so no sum passes int64's end."""
    if uint64(stop) - uint64(c) <= uint64(STOP_EVERY):
        return stop
    return c + int64(STOP_EVERY)


@INLINE
def overdue(ctl):  # type: ignore[no-untyped-def]
    """True once the run's deadline has passed, or the run has stopped (a bounds fault, say):
    checked now and then inside long loops, which then give up."""
    if ld(ctl, CTL_EXIT) != 0:
        return True
    d = ld(ctl, CTL_DEADLINE)
    return d > 0 and now_ns() > d


@linked.device
def overdue_warp(ctl, cmd, w, lane):  # type: ignore[no-untyped-def]
    """``overdue`` as lane 0 saw it, in every lane: a poll that runs on all 32 lanes
    (codegen/warppoll.py) gives up on all of them or on none."""
    late = int64(0)
    if lane == 0 and overdue(ctl):
        late = int64(1)
    return first(cmd, w, lane, late) != 0


@linked.device
def stop_overdue(ctl):  # type: ignore[no-untyped-def]
    """After ``overdue`` inside a loop that gives up: the run ends at its deadline, unless it
    had stopped already (the first exit code wins). A deadline an executor saw first is the
    same timeout: the loop's giving up is marked on it too, else a task that then finished
    on the values the loop had would pass for a run that ended in time."""
    old = cas(ctl, CTL_EXIT, int64(0), int64(EXIT_TIMEOUT))
    if old == 0 or old == EXIT_TIMEOUT:
        ctl[CTL_DETAIL] = GAVE_UP


@INLINE
def signal_is_set(sig, k):  # type: ignore[no-untyped-def]
    """Read signal ``k``; when set, what its setter wrote before is visible.

    The acquire pairs with ``set_signal``'s release exchange."""
    return ld_acquire(sig, k) != 0


# ---- the run queue ----------------------------------------------------------
# (state.py: the ring's protocol and the pairing of each acquire and release)


@linked.device
def fail(ctl, code, detail):  # type: ignore[no-untyped-def]
    """Stop the run with exit ``code`` about ``detail``; True for the first failure, which wins."""
    if cas(ctl, CTL_EXIT, int64(0), int64(code)) == 0:
        ctl[CTL_DETAIL] = detail
        return True
    return False


@linked.device
def queue_push(qseq, qdata, qht, mask, value, ctl, code):  # type: ignore[no-untyped-def]
    """Append ``value``. A full ring is a gasync bug: after ``FULL_NS`` of waiting for a
    slot it stops the run with exit ``code`` naming ``value``, and returns False."""
    since = int64(0)
    while True:
        pos = ld(qht, TAIL)
        seq = ld_acquire(qseq, pos & mask)  # pairs with the consumer's release of the slot
        if seq == pos:
            if cas(qht, TAIL, pos, pos + 1) == pos:
                qdata[pos & mask] = value
                st_release(qseq, pos & mask, pos + 1)  # pairs with the consumer's acquire of seq
                return True
        elif seq < pos:
            t = now_ns()
            if since == 0:
                since = t
            elif t - since > FULL_NS:
                fail(ctl, code, int64(value))
                return False
            pause(64)


@linked.device
def queue_pop(qseq, qdata, qht, mask):  # type: ignore[no-untyped-def]
    """Take the oldest value, or -1 if the ring is empty."""
    return queue_pop_before(qseq, qdata, qht, mask, int64(9223372036854775807))


@linked.device
def queue_pop_before(qseq, qdata, qht, mask, limit):  # type: ignore[no-untyped-def]
    """Take the oldest value if it was pushed before ticket ``limit``, else -1."""
    while True:
        pos = ld(qht, HEAD)
        if pos >= limit:
            return int32(-1)
        # relaxed: an idle executor looks here again and again, and an acquire load would
        # invalidate its SM's L1 at every look; the fence below acquires once it took one
        seq = ld(qseq, pos & mask)
        if seq == pos + 1:
            if cas(qht, HEAD, pos, pos + 1) == pos:
                fence_acquire()  # pairs with the producer's release of seq: the value, the frame
                value = ld(qdata, pos & mask)
                st_release(qseq, pos & mask, pos + mask + 1)  # frees the slot: the next producer acquires it
                return value
        elif seq < pos + 1:
            return int32(-1)


@linked.device
def wake(sched, mask, inst):  # type: ignore[no-untyped-def]
    """Make instance ``inst`` runnable: queue it if idle, flag it if it is running.

    ``sched`` is G.sched (state.Scheduler), ``mask`` its run queue's capacity less one."""
    while True:
        s = ld(sched.ST, inst)
        if s == IDLE:
            # acquires the poller's release of IDLE (its frame); the push releases it onwards
            if cas_acq_rel(sched.ST, inst, int32(IDLE), int32(QUEUED)) == IDLE:
                add(sched.CTL, CTL_INFLIGHT, int64(1))
                queue_push(sched.QSEQ, sched.QDATA, sched.QHT, mask, inst, sched.CTL, EXIT_QUEUE_FULL)
                return
        elif s == RUNNING:
            if cas(sched.ST, inst, int32(RUNNING), int32(NOTIFIED)) == RUNNING:
                return
        else:
            return


@linked.device
def after_poll(sched, mask, inst):  # type: ignore[no-untyped-def]
    """After a PENDING poll: idle the instance, or requeue it if it was woken meanwhile."""
    # releases the poll's frame stores to the waker's acquiring cas in wake
    if cas_release(sched.ST, inst, int32(RUNNING), int32(IDLE)) == RUNNING:
        add(sched.CTL, CTL_INFLIGHT, int64(-1))
        return
    sched.ST[inst] = QUEUED
    queue_push(sched.QSEQ, sched.QDATA, sched.QHT, mask, inst, sched.CTL, EXIT_QUEUE_FULL)
