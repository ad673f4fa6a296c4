"""Device helpers that generated kernels call, with a simulator version of each.

The generated module is the same text for both backends; only this layer
differs. On the GPU it uses PTX through small ``@intrinsic`` functions
(``%globaltimer``, ``nanosleep``) and atomics for every load that must not
be hoisted out of a spin loop (gpu-notes: a plain load in a spin loop is
read once). Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, decided
by the process before Numba is imported) these are Python functions: the
clock is ``perf_counter_ns`` and a pause is ``time.sleep``, which also gives
the other simulated threads the GIL.

The run queue is a bounded multi-producer multi-consumer ring with one
sequence number per slot (Vyukov's design): a slot is free for the producer
holding ticket ``t`` when its sequence is ``t``, and full for the consumer
with ticket ``t`` when it is ``t + 1``. Each task instance is in the queue at
most once (its scheduling state says so), so a ring as large as the number of
instances never fills.
"""

from __future__ import annotations

import time

from numba import config, cuda, int32, int64, uint64

SIM = bool(config.ENABLE_CUDASIM)

# Scheduling states of a task instance (ST array).
IDLE = 0
QUEUED = 1
RUNNING = 2
NOTIFIED = 3
DONE = 4

# CTL words.
CTL_DONE = 0  # instances finished
CTL_EXIT = 1  # 0 running, else an EXIT_* code
CTL_INFLIGHT = 2  # instances ready or running
CTL_DETAIL = 3  # an instance id or other detail for the exit code
CTL_POLLS = 4
CTL_WORDS = 8

EXIT_OK = 1
EXIT_TIMEOUT = 2
EXIT_WATCHDOG = 3
EXIT_DEADLOCK = 4

if SIM:

    def now_ns() -> int:
        return int64(time.perf_counter_ns())

    def pause(ns: int) -> None:
        # Simulated threads share the GIL: a waiter must really sleep, or it
        # starves the one thread with work. Scaled so the longest back-off
        # (4096 "ns") is about a millisecond.
        time.sleep(min(int(ns), 8192) * 250e-9)

else:
    from llvmlite import ir as llvm_ir
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def _globaltimer(typingctx):  # type: ignore[no-untyped-def]
        sig = types.uint64()

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fty = llvm_ir.FunctionType(llvm_ir.IntType(64), [])
            asm = llvm_ir.InlineAsm(fty, "mov.u64 $0, %globaltimer;", "=l", side_effect=True)
            return builder.call(asm, [])

        return sig, codegen

    @cuda.jit(device=True, inline=True)
    def now_ns() -> int:
        return int64(_globaltimer())

    @cuda.jit(device=True, inline=True)
    def pause(ns: int) -> None:
        cuda.nanosleep(uint64(ns))


@cuda.jit(device=True, inline=True)
def atomic_load(arr):  # type: ignore[no-untyped-def]
    """Read word 0 of ``arr`` with an atomic, so the read stays in spin loops."""
    return cuda.atomic.add(arr, 0, arr.dtype.type(0)) if SIM else cuda.atomic.add(arr, 0, 0)


@cuda.jit(device=True, inline=True)
def atomic_store(arr, value):  # type: ignore[no-untyped-def]
    cuda.atomic.exch(arr, 0, value)


@cuda.jit(device=True, inline=True)
def float_store(arr, value):  # type: ignore[no-untyped-def]
    """Store a float in word 0: aligned stores are single-copy atomic, and there is no float exch."""
    arr[0] = value
    cuda.threadfence()


@cuda.jit(device=True, inline=True)
def load_i64(arr, i):  # type: ignore[no-untyped-def]
    return cuda.atomic.add(arr, i, int64(0))


@cuda.jit(device=True, inline=True)
def idiv(a, b):  # type: ignore[no-untyped-def]
    """Integer division truncating toward zero (Rust's), 0 for a zero divisor."""
    if b == 0:
        return a - a
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


@cuda.jit(device=True, inline=True)
def irem(a, b):  # type: ignore[no-untyped-def]
    if b == 0:
        return a - a
    return a - b * idiv(a, b)


@cuda.jit(device=True, inline=True)
def fdiv(a, b):  # type: ignore[no-untyped-def]
    return a / b


@cuda.jit(device=True, inline=True)
def signal_is_set(sig, k):  # type: ignore[no-untyped-def]
    return cuda.atomic.add(sig, k, int32(0)) != 0


@cuda.jit(device=True, inline=True)
def signal_set(sig, k):  # type: ignore[no-untyped-def]
    cuda.atomic.exch(sig, k, int32(1))


# ---- the run queue ----------------------------------------------------------


@cuda.jit(device=True)
def queue_push(qseq, qdata, qht, mask, value):  # type: ignore[no-untyped-def]
    """Append ``value``; returns False only if the ring is full (a gasync bug)."""
    spins = 0
    while True:
        pos = cuda.atomic.add(qht, 1, int64(0))
        seq = cuda.atomic.add(qseq, pos & mask, int64(0))
        if seq == pos:
            if cuda.atomic.cas(qht, 1, pos, pos + 1) == pos:
                qdata[pos & mask] = value
                cuda.threadfence()
                cuda.atomic.exch(qseq, pos & mask, pos + 1)
                return True
        elif seq < pos:
            spins += 1
            if spins > 1_000_000:
                return False
            pause(64)


@cuda.jit(device=True)
def queue_pop(qseq, qdata, qht, mask):  # type: ignore[no-untyped-def]
    """Take the oldest value, or -1 if the ring is empty."""
    while True:
        pos = cuda.atomic.add(qht, 0, int64(0))
        seq = cuda.atomic.add(qseq, pos & mask, int64(0))
        if seq == pos + 1:
            if cuda.atomic.cas(qht, 0, pos, pos + 1) == pos:
                cuda.threadfence()
                value = qdata[pos & mask]
                cuda.atomic.exch(qseq, pos & mask, pos + mask + 1)
                return value
        elif seq < pos + 1:
            return int32(-1)


@cuda.jit(device=True)
def wake(st, qseq, qdata, qht, ctl, mask, inst):  # type: ignore[no-untyped-def]
    """Make instance ``inst`` runnable: queue it if idle, flag it if it is running."""
    while True:
        s = cuda.atomic.add(st, inst, int32(0))
        if s == IDLE:
            if cuda.atomic.cas(st, inst, int32(IDLE), int32(QUEUED)) == IDLE:
                cuda.atomic.add(ctl, CTL_INFLIGHT, int64(1))
                queue_push(qseq, qdata, qht, mask, inst)
                return
        elif s == RUNNING:
            if cuda.atomic.cas(st, inst, int32(RUNNING), int32(NOTIFIED)) == RUNNING:
                return
        else:
            return


@cuda.jit(device=True)
def after_poll(st, qseq, qdata, qht, ctl, mask, inst):  # type: ignore[no-untyped-def]
    """After a PENDING poll: idle the instance, or requeue it if it was woken meanwhile."""
    if cuda.atomic.cas(st, inst, int32(RUNNING), int32(IDLE)) == RUNNING:
        cuda.atomic.add(ctl, CTL_INFLIGHT, int64(-1))
        return
    st[inst] = QUEUED
    queue_push(qseq, qdata, qht, mask, inst)


# ---- fork/join of a warp's lanes for `parallel for` -------------------------
# CMD[w] = (generation, command, lanes done, unused). Lane 0 writes the
# command, bumps the generation, runs its own share and waits for the others.
# Under the simulator the waits block on a condition variable instead of
# spinning: 31 spinning Python threads per warp would starve lane 0 of the GIL.

CMD_EXIT = -1

if SIM:
    import threading

    _conds: dict[tuple[int, int], threading.Condition] = {}
    _conds_lock = threading.Lock()

    def _cond(cmd, w):  # type: ignore[no-untyped-def]
        key = (id(cmd), int(w))
        with _conds_lock:
            return _conds.setdefault(key, threading.Condition())

    def fork(cmd, w, command):  # type: ignore[no-untyped-def]
        c = _cond(cmd, w)
        with c:
            cmd[w, 1] = command
            cmd[w, 0] += 1
            c.notify_all()

    def join_lanes(cmd, ctl, w, lanes):  # type: ignore[no-untyped-def]
        c = _cond(cmd, w)
        with c:
            while cmd[w, 2] < lanes - 1 and ctl[CTL_EXIT] <= EXIT_OK:
                c.wait(0.05)
            cmd[w, 2] = 0

    def lane_wait(cmd, ctl, w, gen):  # type: ignore[no-untyped-def]
        c = _cond(cmd, w)
        with c:
            while cmd[w, 0] == gen:
                if ctl[CTL_EXIT] > EXIT_OK:
                    return int64(-1)
                c.wait(0.05)
            return cmd[w, 0]

    def lane_done(cmd, w):  # type: ignore[no-untyped-def]
        c = _cond(cmd, w)
        with c:
            cmd[w, 2] += 1
            c.notify_all()

else:

    @cuda.jit(device=True)
    def fork(cmd, w, command):  # type: ignore[no-untyped-def]
        cmd[w, 1] = command
        cuda.threadfence()
        cuda.atomic.add(cmd, (w, 0), int64(1))

    @cuda.jit(device=True)
    def join_lanes(cmd, ctl, w, lanes):  # type: ignore[no-untyped-def]
        backoff = 32
        while cuda.atomic.add(cmd, (w, 2), int64(0)) < lanes - 1:
            if cuda.atomic.add(ctl, CTL_EXIT, int64(0)) > EXIT_OK:
                return
            pause(backoff)
            if backoff < 256:
                backoff *= 2
        cuda.atomic.exch(cmd, (w, 2), int64(0))
        cuda.threadfence()

    @cuda.jit(device=True)
    def lane_wait(cmd, ctl, w, gen):  # type: ignore[no-untyped-def]
        """Lanes 1..31: wait for the next command after generation ``gen``."""
        backoff = 32
        while True:
            g = cuda.atomic.add(cmd, (w, 0), int64(0))
            if g != gen:
                cuda.threadfence()
                return g
            if cuda.atomic.add(ctl, CTL_EXIT, int64(0)) > EXIT_OK:
                return int64(-1)
            pause(backoff)
            if backoff < 1024:
                backoff *= 2

    @cuda.jit(device=True)
    def lane_done(cmd, w):  # type: ignore[no-untyped-def]
        cuda.threadfence()
        cuda.atomic.add(cmd, (w, 2), int64(1))
