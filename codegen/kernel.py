"""The executor: the per-warp scheduler loop and the kernel (codegen/tasktable.py has the
program's tables it reads: dispatch, and the tasks' rows that claim and completion read).

Lane 0 of every warp is an executor. It takes work from, in order: its
claimed range of fresh instances, the fresh instances of tasks whose
predecessors are all done (claimed in chunks with one atomic), and the shared
run queue (instances that were woken). When a poll returns READY the instance
is done: its task's successors' predecessor counters drop, and a task whose
counter reaches zero becomes claimable. When nothing is ready it backs off
(``nanosleep``), and leaves when every instance is done, on the deadline, or
when nothing is ready or running while instances remain (a deadlock). Lanes
1..31 wait for ``parallel for`` commands from their lane 0.

What it decides is runtime/deviceexec.py's, compiled once for every program (B6): the
generated ``executor`` is a loop around its ``ex_next`` and ``ex_polled``, with the program's own poll
(``dispatch``) and service point (``service``, ``group_wanted``).
"""

from __future__ import annotations

from gasync.codegen import groups
from gasync.codegen.machine import ABORT, FORK, READY, Shared

EXECUTOR = """
@cuda.jit(device=True)
def executor(w, G, timeout_ns):
    # Lane 0's scheduler: ex_next (runtime/deviceexec.py, the same in every program) says what
    # to do next. It returns to the kernel's loop (which runs the command on all 32 lanes) when
    # a poll forks a parallel loop, when it takes a bulk chunk, and at the end; its own
    # variables wait in EXS[w] meanwhile.
    X = ex_enter(w, G.sched, G.exec, G.jobs, G.TRACE, timeout_ns, EX)
    r = int64(0)
    while True:
        X, ask = ex_next(w, X, r, G.sched, G.exec, G.jobs, G.signals, timeout_ns, TASKS, EX)
        if ask >= 0:  # an instance to poll
            X = ex_polled(w, X, ask, dispatch(ask, w, G), G.sched, G.exec, timeout_ns, TASKS, SUCC, EX)
        elif ask == dx.ASK_LEAVE:
            return X[dx.X_COMMAND]{point}
"""

# the service point's branch, where the program has one (deviceexec's POINT): host signals and due
# sleepers (service), and with groups whether the block leaves for its group phase
POINT = """
        else:  # its service point ({what})"""


def executor_fn(has_service: bool, has_groups: bool) -> str:
    """The generated executor: a loop around deviceexec.ex_next and ex_polled."""
    if not (has_service or has_groups):
        return EXECUTOR.format(point="")
    what = " and ".join(w for w, on in (("service", has_service), ("group_wanted", has_groups)) if on)
    body = POINT.format(what=what)
    if has_service:
        body += "\n            service(w, G)"
    if has_groups:
        body += "\n            r = int64(1) if ask == dx.ASK_POINT and group_wanted(w, G) else int64(0)"
    else:
        body += "\n            r = int64(0)"
    return EXECUTOR.format(point=body)


SPIN_EXECUTOR = """
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
        parent = dx.bulk_chunk_done(CMD[w, dl.CMD_JOB], G.jobs)
        CMD[w, dl.CMD_JOB] = -1
        if parent >= 0:
            {wake_parent}
            dl.add(CTL, dl.CTL_INFLIGHT, int64(-1))
    command = dl.CMD_EXIT
    while dl.ld(CTL, dl.CTL_DONE) < TOTAL_INSTANCES and dl.ld(CTL, dl.CTL_EXIT) == 0:
        if inst >= TOTAL_INSTANCES:
            inst = w
            if HAS_SERVICE: service(w, G)
            dl.past_deadline(CTL, start, timeout_ns)
            if HAS_BULK:
                gid = dx.bulk_claim(w, G.exec, G.jobs)
                if gid > 0:
                    command = gid
                    break
            if inst >= TOTAL_INSTANCES:  # more warps than instances: this one has none
                dl.pause(256)
                continue
        # the acquire pairs with complete's decrements: the predecessors' writes
        if ST[inst] != dl.DONE and dl.ld_acquire(G.sched.PRED, dx.task_of(inst, TASKS)) == 0:
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
                dx.complete(inst, G.sched, TASKS, SUCC)
                dx.flush_done(int64(1), G.sched)
        inst += executors
    if command == dl.CMD_EXIT:
        if dl.ld(CTL, dl.CTL_DONE) >= TOTAL_INSTANCES:
            dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_OK))
        STATS[w, dl.STAT_POLLS] = polls
        end = dl.now_ns()
        STATS[w, dl.STAT_ELAPSED_NS] = end - start
        STATS[w, dl.STAT_END_NS] = end
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
            out.append(f"        par_{loop.gid}(w, lane, G.jobs.JOBARGS_I[j], G.jobs.JOBARGS_F[j], G)")
        else:
            out.append(f"        par_{loop.gid}(w, lane, G.exec.PARGS_I[w], G.exec.PARGS_F[w], G)")
    out.append("    return")
    return out


def executor(shared: Shared) -> str:
    """The executors, their helpers and the kernels."""
    out = executor_fn(shared.has_service, bool(shared.plan.groups))
    wake_parent = shared.wake("parent", "int64(-1)")
    out += "\n" + SPIN_EXECUTOR.format(ready=READY, fork=FORK, abort=ABORT, wake_parent=wake_parent)
    kernels = [KERNEL.format(name=name, how=how, call=call, meet=meet(" " * 8)) for name, how, call in KERNELS]
    return out + "\n".join(kernels)
