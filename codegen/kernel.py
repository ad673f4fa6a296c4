"""The executor: the per-warp scheduler loop and the kernel (codegen/tasktable.py has the
per-task tables it calls: dispatch, completion, claim).

Lane 0 of every warp is an executor. It takes work from, in order: its
claimed range of fresh instances, the fresh instances of tasks whose
predecessors are all done (claimed in chunks with one atomic), and the shared
run queue (instances that were woken). When a poll returns READY the instance
is done: its task's successors' predecessor counters drop, and a task whose
counter reaches zero becomes claimable. When nothing is ready it backs off
(``nanosleep``), and leaves when every instance is done, on the deadline, or
when nothing is ready or running while instances remain (a deadlock). Lanes
1..31 wait for ``parallel for`` commands from their lane 0.
"""

from __future__ import annotations

from gasync.codegen import groups
from gasync.codegen.machine import ABORT, FORK, READY, Shared

EXECUTOR = """
@cuda.jit(device=True)
def executor(w, G, timeout_ns):
    # Lane 0's scheduler. It returns to the kernel's loop (which runs CMD[w, COMMAND] on all 32
    # lanes) when a poll forks a parallel loop, when it takes a bulk chunk, and at the end;
    # its own variables wait in EXS[w] meanwhile.
    CTL, ST = G.sched.CTL, G.sched.ST
    CMD, EXS, STATS = G.exec.CMD, G.exec.EXS, G.exec.STATS
    lo = EXS[w, dl.EXS_LO]
    hi = EXS[w, dl.EXS_HI]
    polls = EXS[w, dl.EXS_POLLS]
    idle = EXS[w, dl.EXS_IDLE]
    start = EXS[w, dl.EXS_START]
    resume = EXS[w, dl.EXS_RESUME]
    done = EXS[w, dl.EXS_DONE]
    backoff = EXS[w, dl.EXS_BACKOFF]
    fresh = EXS[w, dl.EXS_FRESH]  # 0 once every task's instances have all been claimed: stop asking
    epoch = EXS[w, dl.EXS_EPOCH]  # the job epoch whose slots it last scanned in vain
    if start == 0:
        start = dl.now_ns()
        STATS[w, dl.STAT_SMID] = dl.smid()
        if timeout_ns > 0:
            dl.cas(CTL, dl.CTL_DEADLINE, int64(0), start + timeout_ns)
        if HAS_SERVICE: service(w, G)  # host signals set at launch (--signal s=0), before any poll
    if HAS_BULK and CMD[w, dl.CMD_JOB] >= 0:  # (Numba drops the branch where there is no bulk for)
        bulk_chunk_done(w, CMD[w, dl.CMD_JOB], G)
        CMD[w, dl.CMD_JOB] = -1
    command = dl.CMD_EXIT
    while True:
        inst = int64(-1)
        if resume >= 0:
            inst = resume  # it forked a parallel loop, which has run: poll it again
            resume = -1
        else:
            if lo >= hi and fresh != 0:
                # fresh instances first: a task that keeps yielding must not starve unstarted ones
                lo, hi, fresh = claim(G.sched)
            if lo < hi:
                inst = lo  # FRESH until now, whatever woke it (state.py, ST)
                lo += 1
                ST[inst] = dl.RUNNING
            else:
                inst = int64(dl.queue_pop(G.sched.QSEQ, G.sched.QDATA, G.sched.QHT, QMASK))
                if inst >= 0:
                    ST[inst] = dl.RUNNING  # QUEUED by its waker: this executor's now
                if inst < 0 and done > 0:
                    done = flush_done(done, G.sched)
                if inst < 0 and HAS_BULK:
                    # one word to look at (relaxed: no invalidation of L1 at each look); the
                    # slots only when a job was posted since the last scan that found nothing
                    now_epoch = dl.ld(CTL, dsync.CTL_JOB_EPOCH)
                    if now_epoch != epoch:
                        dl.fence_acquire()  # pairs with bulk_post's release of the epoch
                        gid = bulk_claim(w, G)
                        if gid > 0:
                            command = gid
                            break
                        epoch = now_epoch
        if inst >= 0:  # (a forked one is still RUNNING, or NOTIFIED by a wake meanwhile)
            backoff = 32
            polls += 1
            if WAIT_IN_PLACE:
                # its channel awaits may wait in place while it has nothing else to run: no
                # claimed fresh instance of its own (state.py, Waiting in place)
                EXS[w, dl.EXS_SPIN] = 1 if lo >= hi else 0
            r = dispatch(inst, w, G)
            if r == {fork}:
                resume = inst
                command = CMD[w, dl.CMD_COMMAND]
                break
            if r == {abort}:
                dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_TIMEOUT))
                break
            if r == {ready}:
                ST[inst] = dl.DONE
                complete(inst, G.sched)
                done += 1
                if done >= 256:
                    done = flush_done(done, G.sched)
            else:
                dl.after_poll(G.sched, QMASK, inst)
            if polls % 64 == 0:
                # a busy executor still honours the deadline, another's exit, timers and the host
                if HAS_SERVICE: service(w, G)
                if dl.ld(CTL, dl.CTL_EXIT) != 0:
                    break
                if dl.past_deadline(CTL, start, timeout_ns):
                    break
            continue
        # nothing to run: look at the queue again soon, and at the rest (timers, the host,
        # the end, the deadline, a deadlock) every 8th time, as each look costs atomics
        idle += 1
        if idle % 8 == 0:
            if HAS_SERVICE: service(w, G)
            if dl.ld(CTL, dl.CTL_EXIT) != 0:
                break
            if dl.ld(CTL, dl.CTL_DONE) >= TOTAL_INSTANCES:
                dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_OK))
                break
            if dl.past_deadline(CTL, start, timeout_ns):
                break
            if dl.ld(CTL, dl.CTL_INFLIGHT) == 0 and not host_pending(G.signals):
                # nothing ready, running or asleep, no host signal to come, yet instances left:
                # nothing can ever wake them. In flight is read again after the host signals,
                # as one that arrived meanwhile counts in it until its waiters are woken.
                cuda.threadfence()  # a full fence, off the hot path: the two reads of in flight stay apart
                if dl.ld(CTL, dl.CTL_INFLIGHT) == 0 and dl.ld(CTL, dl.CTL_DONE) < TOTAL_INSTANCES:
                    dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_DEADLOCK))
                    break
        dl.pause(backoff)
        if backoff < IDLE_BACKOFF_MAX:
            backoff *= 2
    if command == dl.CMD_EXIT:
        flush_done(done, G.sched)
        done = 0
        STATS[w, dl.STAT_POLLS] = polls
        STATS[w, dl.STAT_IDLE] = idle
        STATS[w, dl.STAT_ELAPSED_NS] = dl.now_ns() - start
    CMD[w, dl.CMD_COMMAND] = command
    EXS[w, dl.EXS_LO] = lo
    EXS[w, dl.EXS_HI] = hi
    EXS[w, dl.EXS_POLLS] = polls
    EXS[w, dl.EXS_IDLE] = idle
    EXS[w, dl.EXS_START] = start
    EXS[w, dl.EXS_RESUME] = resume
    EXS[w, dl.EXS_DONE] = done
    EXS[w, dl.EXS_BACKOFF] = backoff
    EXS[w, dl.EXS_FRESH] = fresh
    EXS[w, dl.EXS_EPOCH] = epoch
    return command


@cuda.jit(device=True)
def flush_done(done, sched):
    # finished instances are counted in batches: one atomic per batch, not per instance
    dl.add(sched.CTL, dl.CTL_DONE, done)
    dl.add(sched.CTL, dl.CTL_INFLIGHT, -done)
    return int64(0)


@cuda.jit(device=True)
def bulk_claim(w, G):
    # take one chunk of a posted bulk job for this warp: returns its loop id, or 0
    JOB, JOBSLOTS = G.jobs.JOB, G.jobs.JOBSLOTS
    for s in range(JOBSLOTS.shape[0]):
        j = dl.ld_acquire(JOBSLOTS, s)  # pairs with bulk_post's release: the job's fields and arguments
        if j >= 0:
            c = dl.add(JOB, (j, dsync.JOB_NEXT), int64(1))
            if c < dl.ld(JOB, (j, dsync.JOB_CHUNKS)):
                chunk = dl.ld(JOB, (j, dsync.JOB_CHUNK))
                lo = dl.ld(JOB, (j, dsync.JOB_LO)) + c * chunk
                G.exec.PARGS_I[w, 0] = lo
                end = dl.ld(JOB, (j, dsync.JOB_HI))
                G.exec.PARGS_I[w, 1] = lo + chunk if end - lo > chunk else end  # no lo + chunk past 2^63 - 1
                G.exec.CMD[w, dl.CMD_JOB] = j
                return dl.ld(JOB, (j, dsync.JOB_LOOP))
    return int64(0)


@cuda.jit(device=True)
def bulk_chunk_done(w, j, G):
    # after the warp ran a chunk of job j: the last chunk wakes the waiting task. The
    # lanes met at warp_sync after their stores, so lane 0's acquire-release add carries
    # them; the last chunk's add acquires every other chunk's, and the wake releases them
    # all to the parent's next poll.
    JOB, JOBSLOTS = G.jobs.JOB, G.jobs.JOBSLOTS
    if dl.add_acq_rel(JOB, (j, dsync.JOB_DONE), int64(1)) == dl.ld(JOB, (j, dsync.JOB_CHUNKS)) - 1:
        for s in range(JOBSLOTS.shape[0]):
            dl.cas(JOBSLOTS, s, j, int64(-1))
        parent = dl.ld(JOB, (j, dsync.JOB_PARENT))
        {wake_parent}
        dl.add(G.sched.CTL, dl.CTL_INFLIGHT, int64(-1))


@cuda.jit(device=True)
def spin_executor(w, G, timeout_ns, executors):
    # The naive baseline: poll every unfinished instance of mine (w, w + E, ...) in turn,
    # woken or not; between sweeps, run bulk chunks, timers and host signals.
    CTL, ST = G.sched.CTL, G.sched.ST
    CMD, EXS, STATS = G.exec.CMD, G.exec.EXS, G.exec.STATS
    inst = EXS[w, dl.EXS_LO]
    polls = EXS[w, dl.EXS_POLLS]
    start = EXS[w, dl.EXS_START]
    if start == 0:
        start = dl.now_ns()
        STATS[w, dl.STAT_SMID] = dl.smid()
        inst = w
        if timeout_ns > 0:
            dl.cas(CTL, dl.CTL_DEADLINE, int64(0), start + timeout_ns)
        if HAS_SERVICE: service(w, G)  # host signals set at launch (--signal s=0), before any poll
    if HAS_BULK and CMD[w, dl.CMD_JOB] >= 0:  # (Numba drops the branch where there is no bulk for)
        bulk_chunk_done(w, CMD[w, dl.CMD_JOB], G)
        CMD[w, dl.CMD_JOB] = -1
    command = dl.CMD_EXIT
    while dl.ld(CTL, dl.CTL_DONE) < TOTAL_INSTANCES and dl.ld(CTL, dl.CTL_EXIT) == 0:
        if inst >= TOTAL_INSTANCES:
            inst = w
            if HAS_SERVICE: service(w, G)
            dl.past_deadline(CTL, start, timeout_ns)
            if HAS_BULK:
                gid = bulk_claim(w, G)
                if gid > 0:
                    command = gid
                    break
            if inst >= TOTAL_INSTANCES:  # more warps than instances: this one has none
                dl.pause(256)
                continue
        # the acquire pairs with complete's decrements: the predecessors' writes
        if ST[inst] != dl.DONE and dl.ld_acquire(G.sched.PRED, task_of(inst)) == 0:
            if ST[inst] == dl.FRESH:
                # started: a wake now flags it (NOTIFIED), which no one reads here, and never
                # queues it; the timeout's report reads what it waits on (runtime/exits.py)
                ST[inst] = dl.RUNNING
            polls += 1
            r = dispatch(inst, w, G)
            if r == {fork}:
                command = CMD[w, dl.CMD_COMMAND]
                break
            if r == {abort}:
                dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_TIMEOUT))
                break
            if r == {ready}:
                ST[inst] = dl.DONE
                complete(inst, G.sched)
                flush_done(int64(1), G.sched)
        inst += executors
    if command == dl.CMD_EXIT:
        if dl.ld(CTL, dl.CTL_DONE) >= TOTAL_INSTANCES:
            dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_OK))
        STATS[w, dl.STAT_POLLS] = polls
        STATS[w, dl.STAT_ELAPSED_NS] = dl.now_ns() - start
    CMD[w, dl.CMD_COMMAND] = command
    EXS[w, dl.EXS_LO] = inst
    EXS[w, dl.EXS_POLLS] = polls
    EXS[w, dl.EXS_START] = start
    return command

"""

# One kernel per executor, so a run compiles only the one it uses (``mode`` stays a
# parameter: a prepared launch marshals the same arguments for both).
KERNEL = """
@cuda.jit(cache=True)
def {name}(G, timeout_ns, mode):
    # Every warp: lane 0 schedules and polls{how}; then all 32 lanes, converged, run
    # what it handed them (a parallel loop or a bulk chunk), until it hands them EXIT.
    CMD = G.exec.CMD
    tid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    w = tid // LANES
    lane = tid % LANES
    executors = (cuda.gridDim.x * cuda.blockDim.x) // LANES
    while True:
        command = int64(0)
        if lane == 0:
            command = {call}
        {meet}
        if command == dl.CMD_EXIT:
            return
        run_parallel(command, w, lane, G)
        dl.warp_sync(CMD, w)
"""
# The lanes take lane 0's command by shuffle as they meet (dl.warp_command), not each reading
# back the word lane 0 stored before the meeting (False: they read it, as before; for staging)
COMMAND_BY_SHUFFLE = True


def meet(ind: str) -> str:
    """The lanes' meeting after lane 0 ran its executor, at indentation ``ind``: then every lane
    holds lane 0's ``command``."""
    if COMMAND_BY_SHUFFLE:
        return "command = dl.warp_command(CMD, w, command)  # lane 0's, to every lane by shuffle"
    return f"dl.warp_sync(CMD, w)\n{ind}command = CMD[w, dl.CMD_COMMAND]"


KERNELS = (
    ("gasync_kernel", "", "executor(w, G, timeout_ns)"),
    ("gasync_spin_kernel", " (the naive spin executor)", "spin_executor(w, G, timeout_ns, executors)"),
)


def run_parallel(shared: Shared) -> list[str]:
    """Lanes 1..31 run command ``command``: a parallel for (rows of PARGS) or a bulk chunk (rows of JOBARGS)."""
    out = ["@cuda.jit(device=True)", "def run_parallel(command, w, lane, G):"]
    for loop in shared.parallel:
        if groups.locals_param(shared.plan, loop.fn):
            continue  # a group task's: its pinned warp runs it (codegen/groupkernel.py)
        out.append(f"    if command == {loop.gid}:")
        if loop.bulk:
            out.append("        j = G.exec.CMD[w, dl.CMD_JOB]")
            state = shared.par_g(loop.gid)
            out.append(f"        par_{loop.gid}(w, lane, G.jobs.JOBARGS_I[j], G.jobs.JOBARGS_F[j], {state})")
        else:
            state = shared.par_g(loop.gid)
            out.append(f"        par_{loop.gid}(w, lane, G.exec.PARGS_I[w], G.exec.PARGS_F[w], {state})")
    out.append("    return")
    return out


def executor(shared: Shared) -> str:
    """The executors, their helpers and the kernels."""
    out = EXECUTOR.format(ready=READY, fork=FORK, abort=ABORT, wake_parent=shared.wake("parent", "int64(-1)"))
    kernels = [KERNEL.format(name=name, how=how, call=call, meet=meet(" " * 8)) for name, how, call in KERNELS]
    return out + "\n".join(kernels)
