"""The executor's loop: one code for every program, compiled once and kept (runtime/linked.py).

Lane 0 of every warp is an executor (codegen/kernel.py says what it takes work from, and in
which order). What it decides is the same in every program; only two things are the program's
own: the poll of an instance (the generated ``dispatch``) and its service point (``service``:
host signals and due sleepers; ``group_wanted``: whether its block leaves for a group phase).
So the generated ``executor`` is a short loop around three helpers compiled once for all
programs, which pass lane 0's variables ``X`` from one to the next: ``ex_enter`` reads them from
EXS[w]; ``ex_next`` says what to do next (its *ask*); ``ex_polled`` takes a poll's result
(``POLL_*``): the instance's end counted, or the instance idled or queued again. The asks:

- an instance (``>= 0``): poll it, then hand its result to ``ex_polled``,
- ``ASK_POINT``: run the service point; the next ``ex_next`` takes 1 where the block leaves for
  its group phase (``r``),
- ``ASK_SERVICE``: run ``service`` only (the first entry: host signals set at launch),
- ``ASK_LEAVE``: return ``X[X_COMMAND]`` to the kernel's loop (a parallel loop's or a bulk
  chunk's id for the warp's lanes, ``CMD_GROUPS``, or ``CMD_EXIT``); ``X`` is in EXS[w] by then.

What differs between programs reaches them as arguments of fixed types: ``EX``, a tuple of the
program's numbers (``EX_*``), and two constant tables, ``TASKS`` (a row per task: ``TASK_*``)
and ``SUCC`` (each task's successors, a list ended by -1); and as the variant's switches
(``executor_for``: whether it has a bulk for, a service point...), frozen in each variant so that
what a program does not use is not compiled. NVVM inlines the helpers into the generated
executor, where the numbers are the caller's constants (bench/NOTES.md compares the SASS).
The tables' readers (``claim``, ``complete``) and the bulk jobs' are runtime/devicetasks.py's.
"""

from __future__ import annotations

import types

from numba import cuda, int64

from gasync.runtime import devicelib as dl
from gasync.runtime import devicesync as dsync
from gasync.runtime import linked
from gasync.runtime.devicetasks import (  # noqa: F401  (the generated code calls them through dx)
    DONE_BATCH,
    TASK_CLAIMED,
    TASK_COUNT,
    TASK_FIRST,
    TASK_SUCC,
    TASK_WORDS,
    bulk_chunk_done,
    bulk_claim,
    claim,
    complete,
    count_done,
    flush_done,
    task_of,
)
from gasync.runtime.state import CMD_EXIT, CMD_GROUPS
from gasync.runtime.words import (
    CMD_COMMAND,
    CMD_JOB,
    CTL_DEADLINE,
    CTL_DONE,
    CTL_EXIT,
    CTL_INFLIGHT,
    CTL_JOB_EPOCH,
    DONE,
    EXIT_DEADLOCK,
    EXIT_OK,
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
    RUNNING,
    STAT_ELAPSED_NS,
    STAT_END_NS,
    STAT_IDLE,
    STAT_POLLS,
    STAT_SMID,
)

# a poll's result (codegen/shared.py returns these from every poll; tests/unit/test_deviceexec.py)
POLL_READY, POLL_FORK, POLL_ABORT = 1, 2, 3

# what ex_next asks of the generated executor (an instance to poll is >= 0)
ASK_LEAVE = -1
ASK_POINT = -2
ASK_SERVICE = -3

# X: lane 0's variables between two steps (EXS[w] keeps the first ten while its lanes run a command)
X_LO, X_HI, X_POLLS, X_IDLE, X_START, X_RESUME, X_DONE, X_BACKOFF, X_FRESH, X_EPOCH = range(10)
X_LAST = 10  # where it is: a LAST_* (what r answers)
X_COMMAND = 11  # what it hands the kernel's loop, once it asked to leave
LAST_NONE, LAST_BUSY, LAST_IDLE, LAST_START = -1, -2, -3, -4  # (busy, idle: where it met its service point)
LAST_DUE, LAST_STOP = -5, -6  # after a poll: its service point is due; it leaves (X_COMMAND)

# EX: the program's numbers (arguments: NVVM folds them where it inlines the step)
EX_TOTAL = 0  # its task instances
EX_QMASK = 1  # the run queue's capacity less one
EX_BACKOFF_MAX = 2  # the longest pause (ns) of an idle executor between looks for work
EX_WORDS = 3

# A variant's switches (executor_for: each variant is compiled once, with its switches frozen, so
# that Numba drops what a program does not use before NVVM sees it)
BULK = False  # it has a bulk for, whose chunks idle executors take
SPIN = False  # a channel await may wait in its poll (state.py, Waiting in place)
POINT = False  # it has a service point (signals, sleepers or groups): ex_next asks for it
SERVICE = False  # service has work (signals or sleepers): asked at the first entry too
TRACED = False  # a traced run, whose wakes are recorded
SWITCHES = ("BULK", "SPIN", "POINT", "SERVICE", "TRACED")

LOOK_EVERY_POLLS = 64  # a busy executor's service point: every this many polls
LOOK_EVERY_IDLE = 8  # an idle one's: every this many empty looks
ENDED_EVERY_TURN = True  # and at the others, at the run's end alone (_ended)


@linked.device
def host_pending(signals):  # type: ignore[no-untyped-def]
    """Whether a host signal is still to come (HOSTPEND is 0 but where the host sets one)."""
    for k in range(signals.HOSTPEND.shape[0]):
        if dsync.host_signal_pending(signals, k):
            return True
    return False


def ex_enter(w, sched, exe, jobs, trace, timeout_ns, EX):  # type: ignore[no-untyped-def]
    """Lane 0's variables, from EXS[w]: at the first entry it starts the clock and the run's
    deadline, and asks for the service first; after a bulk chunk its lanes ran, the chunk is done."""
    EXS = exe.EXS
    start = EXS[w, EXS_START]
    last = int64(LAST_NONE)
    if start == 0:
        start = dl.now_ns()
        exe.STATS[w, STAT_SMID] = dl.smid()
        if timeout_ns > 0:
            dl.cas(sched.CTL, CTL_DEADLINE, int64(0), start + timeout_ns)
        if SERVICE:
            last = int64(LAST_START)  # host signals set at launch (--signal s=0), before any poll
    if BULK and exe.CMD[w, CMD_JOB] >= 0:
        parent = bulk_chunk_done(exe.CMD[w, CMD_JOB], jobs)
        exe.CMD[w, CMD_JOB] = -1
        if parent >= 0:
            if TRACED:
                dsync.wake_traced(sched, EX[EX_QMASK], trace, w, int64(-1), parent)
            else:
                dl.wake(sched, EX[EX_QMASK], parent)
            dl.add(sched.CTL, CTL_INFLIGHT, int64(-1))
    lo, hi, polls, idle = EXS[w, EXS_LO], EXS[w, EXS_HI], EXS[w, EXS_POLLS], EXS[w, EXS_IDLE]
    resume, done, backoff = EXS[w, EXS_RESUME], EXS[w, EXS_DONE], EXS[w, EXS_BACKOFF]
    fresh = EXS[w, EXS_FRESH]  # 0 once every task's instances have all been claimed: stop asking
    epoch = EXS[w, EXS_EPOCH]  # the job epoch whose slots it last scanned in vain
    return (lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, last, int64(CMD_EXIT))


@linked.device
def _leave(w, X, command, sched, exe):  # type: ignore[no-untyped-def]
    """Lane 0's variables to EXS[w] and its command to CMD[w] (the run's end: its counts to STATS)."""
    lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, last, _ = X
    if command == CMD_EXIT:
        flush_done(done, sched)
        done = int64(0)
        exe.STATS[w, STAT_POLLS] = polls
        exe.STATS[w, STAT_IDLE] = idle
        end = dl.now_ns()
        exe.STATS[w, STAT_ELAPSED_NS] = end - start
        exe.STATS[w, STAT_END_NS] = end
    exe.CMD[w, CMD_COMMAND] = command
    EXS = exe.EXS
    EXS[w, EXS_LO], EXS[w, EXS_HI], EXS[w, EXS_POLLS], EXS[w, EXS_IDLE] = lo, hi, polls, idle
    EXS[w, EXS_START], EXS[w, EXS_RESUME], EXS[w, EXS_DONE] = start, resume, done
    EXS[w, EXS_BACKOFF], EXS[w, EXS_FRESH], EXS[w, EXS_EPOCH] = backoff, fresh, epoch
    return (lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, int64(LAST_NONE), command)


@linked.device
def _ended(ctl):  # type: ignore[no-untyped-def]
    """An idle executor's look at every empty turn: the run's exit, which the batch that finishes
    the last instance sets (count_done). Looked at only every LOOK_EVERY_IDLE-th turn (with the
    rest, _idle_stop), the end waited up to 8 pauses of the longest back-off: ~60 us of B4's
    ~250 us span after its last tile (bench/NOTES.md, runs 104-105)."""
    return dl.ld(ctl, CTL_EXIT) != 0


@linked.device
def _busy_stop(ctl, start, timeout_ns):  # type: ignore[no-untyped-def]
    """A busy executor's looks at the rest: another's exit, the deadline. True: leave."""
    return _ended(ctl) or dl.past_deadline(ctl, start, timeout_ns)


@linked.device
def _paused(backoff, most):  # type: ignore[no-untyped-def]
    """An idle executor's pause of ``backoff`` ns: the next one twice as long, up to ``most``."""
    dl.pause(backoff)
    return backoff * 2 if backoff < most else backoff


@linked.device
def _idle_stop(sched, signals, start, timeout_ns, total):  # type: ignore[no-untyped-def]
    """An idle executor's looks at the rest: another's exit, the end, the deadline, a deadlock.
    True: leave."""
    CTL = sched.CTL
    if _ended(CTL):
        return True
    if dl.ld(CTL, CTL_DONE) >= total:
        dl.cas(CTL, CTL_EXIT, int64(0), int64(EXIT_OK))
        return True
    if dl.past_deadline(CTL, start, timeout_ns):
        return True
    if dl.ld(CTL, CTL_INFLIGHT) == 0 and not host_pending(signals):
        # nothing ready, running or asleep, no host signal to come, yet instances left: nothing
        # can ever wake them. In flight is read again after the host signals, as one that
        # arrived meanwhile counts in it until its waiters are woken.
        cuda.threadfence()  # a full fence, off the hot path: the two reads of in flight stay apart
        if dl.ld(CTL, CTL_INFLIGHT) == 0 and dl.ld(CTL, CTL_DONE) < total:
            dl.cas(CTL, CTL_EXIT, int64(0), int64(EXIT_DEADLOCK))
            return True
    return False


def ex_polled(w, X, inst, r, sched, exe, timeout_ns, TASKS, SUCC, EX):  # type: ignore[no-untyped-def]
    """X after the poll of ``inst`` returned ``r`` (a forked one is still RUNNING, or NOTIFIED by
    a wake meanwhile): its end counted, or the instance idled or queued again; its LAST says
    whether the executor leaves now (a fork, an abort, the run's end or deadline) or meets its
    service point first."""
    lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, last, command = X
    CTL = sched.CTL
    last = int64(LAST_NONE)
    if r == POLL_FORK:
        resume = inst  # its warp runs the parallel loop, then it is polled again
        command = exe.CMD[w, CMD_COMMAND]
        last = int64(LAST_STOP)
    elif r == POLL_ABORT:
        dl.cas(CTL, CTL_EXIT, int64(0), int64(EXIT_TIMEOUT))
        last = int64(LAST_STOP)
    else:
        if r == POLL_READY:
            sched.ST[inst] = DONE
            complete(inst, sched, TASKS, SUCC)
            done += 1
            if done >= DONE_BATCH:
                done = count_done(done, sched, EX[EX_TOTAL])
        else:
            dl.after_poll(sched, EX[EX_QMASK], inst)
        if polls % LOOK_EVERY_POLLS == 0:
            # a busy executor still honours the deadline, another's exit, timers and the host
            if POINT:
                last = int64(LAST_DUE)
            elif _busy_stop(CTL, start, timeout_ns):
                last = int64(LAST_STOP)
    return (lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, last, command)


def ex_next(w, X, r, sched, exe, jobs, signals, timeout_ns, TASKS, EX):  # type: ignore[no-untyped-def]
    """(X, ask): what lane 0 does next (the module's docstring), ``r`` answering its service
    point. It returns to the kernel's loop when a poll forked a parallel loop, when it takes a
    bulk chunk, at a group phase, and at the end."""
    lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, last, command = X
    CTL, ST = sched.CTL, sched.ST
    stop = last == LAST_STOP
    if not stop:
        command = int64(CMD_EXIT)
    # (each place is looked at only where the program has one: its variant drops the others)
    if SERVICE and last == LAST_START:
        return (lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, int64(LAST_NONE), command), int64(
            ASK_SERVICE
        )
    if POINT and last == LAST_DUE:
        return (lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, int64(LAST_BUSY), command), int64(
            ASK_POINT
        )
    if POINT and last == LAST_BUSY:
        if r != 0:
            command = int64(CMD_GROUPS)
            stop = True
        else:
            stop = _busy_stop(CTL, start, timeout_ns)
    if POINT and last == LAST_IDLE:
        if r != 0:
            command = int64(CMD_GROUPS)
            stop = True
        else:
            stop = _idle_stop(sched, signals, start, timeout_ns, EX[EX_TOTAL])
        if not stop:
            backoff = _paused(backoff, EX[EX_BACKOFF_MAX])
    while not stop:
        inst = int64(-1)
        if resume >= 0:
            inst = resume  # it forked a parallel loop, which has run: poll it again
            resume = -1
        else:
            if lo >= hi and fresh != 0:
                # fresh instances first: a task that keeps yielding must not starve unstarted ones
                lo, hi, fresh = claim(sched, TASKS)
            if lo < hi:
                inst = lo  # FRESH until now, whatever woke it (state.py, ST)
                lo += 1
                ST[inst] = RUNNING
            else:
                inst = int64(dl.queue_pop(sched.QSEQ, sched.QDATA, sched.QHT, EX[EX_QMASK]))
                if inst >= 0:
                    ST[inst] = RUNNING  # QUEUED by its waker: this executor's now
                if inst < 0 and done > 0:
                    done = count_done(done, sched, EX[EX_TOTAL])
                if inst < 0 and BULK:
                    # one word to look at (relaxed: no invalidation of L1 at each look); the
                    # slots only when a job was posted since the last scan that found nothing
                    now_epoch = dl.ld(CTL, CTL_JOB_EPOCH)
                    if now_epoch != epoch:
                        dl.fence_acquire()  # pairs with bulk_post's release of the epoch
                        gid = bulk_claim(w, exe, jobs)
                        if gid > 0:
                            command = gid
                            break
                        epoch = now_epoch
        if inst >= 0:
            backoff = 32
            polls += 1
            if SPIN:
                # its channel awaits may wait in place while it has nothing else to run: no
                # claimed fresh instance of its own (state.py, Waiting in place)
                exe.EXS[w, EXS_SPIN] = 1 if lo >= hi else 0
            return (lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, int64(LAST_NONE), command), inst
        # nothing to run: look at the queue again soon, and at the rest (timers, the host, the
        # end, the deadline, a deadlock) every 8th time, as each look costs atomics; at the exit
        # alone (one load) every other time
        idle += 1
        if idle % LOOK_EVERY_IDLE == 0:
            if POINT:
                return (
                    lo,
                    hi,
                    polls,
                    idle,
                    start,
                    resume,
                    done,
                    backoff,
                    fresh,
                    epoch,
                    int64(LAST_IDLE),
                    command,
                ), int64(ASK_POINT)
            if _idle_stop(sched, signals, start, timeout_ns, EX[EX_TOTAL]):
                break
        elif ENDED_EVERY_TURN and _ended(CTL):
            break
        backoff = _paused(backoff, EX[EX_BACKOFF_MAX])
    X = (lo, hi, polls, idle, start, resume, done, backoff, fresh, epoch, last, command)
    return _leave(w, X, command, sched, exe), int64(ASK_LEAVE)


_VARIANTS: dict[tuple[bool, ...], tuple[object, ...]] = {}


def executor_for(bulk: bool, spin: bool, point: bool, service: bool, traced: bool) -> tuple[object, ...]:
    """(ex_enter, ex_next, ex_polled) with these switches (SWITCHES' order) frozen: copies of the two
    functions whose globals hold them, each a helper of its own (runtime/linked.py keys it by
    its name), made once a process."""
    key = (bool(bulk), bool(spin), bool(point), bool(service), bool(traced))
    if key not in _VARIANTS:
        scope = {**globals(), **dict(zip(SWITCHES, key, strict=True))}
        tag = "_".join(name.lower() for name, on in zip(SWITCHES, key, strict=True) if on) or "plain"
        made = []
        for fn in (ex_enter, ex_next, ex_polled):
            copy = types.FunctionType(fn.__code__, scope, f"{fn.__name__}_{tag}", fn.__defaults__, fn.__closure__)
            copy.__qualname__ = copy.__name__
            copy.__doc__ = fn.__doc__
            made.append(linked.device(copy))
        _VARIANTS[key] = tuple(made)
    return _VARIANTS[key]
