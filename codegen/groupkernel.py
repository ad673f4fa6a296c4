"""The kernel of a program with groups: blocks take turns between group instances and the executor.

Each turn of a block starts with thread 0 claiming a group instance
(``group_claim``: the next instance of a group whose predecessors are done) and
telling the block through its block words (runtime/state.py, groups). With
one, each warp of the block runs one task instance of it, pinned
(``pinned``: lane 0 polls it until it is done, the warp's lanes run its
parallel loops), after the block has zeroed the instance's local buffers and
emptied its channels; the warps beyond its tasks run the executor until its
last task instance ends (WANT_BUSY, GW_LIVE). Without one, every warp runs the executor as a program
without groups does, until the run ends or a warp sees, at a service point,
that a group instance can start (``group_wanted``), when every warp of the
block leaves it (command CMD_GROUPS) and the block meets. On the simulator's
one block the same kernel runs group instances one at a time. The block meets
at ``cuda.syncthreads`` only while none of its threads has returned: it
leaves together, when thread 0 has seen the run's exit.
"""

from __future__ import annotations

from gasync.codegen import groups, groupwaits, kernel, occupancy, pinned, tasktable
from gasync.codegen.machine import ABORT, FORK, READY, Shared
from gasync.codegen.names import source_line_text
from gasync.planner.model import GroupDef, Plan, TaskDef

LANES = 32
# a pinned warp whose task waits on a local channel naps (up to QUIET_NAPS naps of QUIET_NAP_NS)
# until another warp moves one, before it polls again; 0: it polls again at once (bench/NOTES.md)
QUIET_NAPS = 32
QUIET_NAP_NS = 32


def module_parts(shared: Shared) -> list[str]:
    """The device functions of groups: claims, one runner per group, the pinned loop."""
    plan = shared.plan
    grouped = tuple(t for t in plan.tasks if t.group is not None)
    out = [f"QUIET_NAPS = {QUIET_NAPS}", f"QUIET_NAP_NS = {QUIET_NAP_NS}"]
    out += pinned.constants(plan)
    out += [*occupancy.kernel_options(plan), "", ""]
    out += [*_claim(plan), "", "", *WANT.strip("\n").splitlines(), "", "", *_wanted(plan), "", ""]
    for k, g in enumerate(plan.groups):
        out += [*_dispatch(shared, g, [t for t in grouped if t.group == g.name]), "", ""]
        if g.name not in shared.warp:  # (a poll on all lanes runs its loops itself: codegen/warppoll.py)
            out += [*_run_parallel(shared, g), "", ""]
        out += [*groupwaits.local_wait(shared, g), "", "", *groupwaits.stuck(g), "", ""]
        form = {part: text.format(g=g.name) for part, text in (ALL_LANES if g.name in shared.warp else LANE0).items()}
        text = PINNED.format(ready=READY, fork=FORK, abort=ABORT, g=g.name, **form)
        out += [*text.strip("\n").splitlines(), "", ""]
        out += [*_runner(shared, g, k), "", ""]
    out += _run_group(plan)
    return out


def _dispatch(shared: Shared, g: GroupDef, tasks: list[TaskDef]) -> list[str]:
    """Poll a task instance of group ``g`` (tasktable.task_dispatch's for the executor's tasks)."""
    out = ["@cuda.jit(device=True)", f"def dispatch_{g.name}(inst, w, G, L):"]
    jb = shared.jb_arg("int64(0)")
    for t in tasks:
        end = t.first_instance + t.count
        out.append(f"    if inst < {end}:  # task {t.name}, instances {t.first_instance}..{end - 1}")
        fb_i, fb_f = pinned.frame_bases(shared, g, t)
        if shared.trace:
            out += [f"        fb = {fb_i}", "        s0 = G.frames.FI[fb]", "        t0 = dl.now_ns()"]
            out.append(f"        r = poll_{t.name}(inst, w, fb, {fb_f}, {jb}G, L)")
            out += tasktable.traced_poll_end(shared, t)
            out.append("        return r")
        else:
            out.append(f"        return poll_{t.name}(inst, w, {fb_i}, {fb_f}, {jb}G, L)")
    out.append(f"    return {READY}")
    return out


def _run_parallel(shared: Shared, g: GroupDef) -> list[str]:
    """The parallel loops a task of ``g`` can hand its warp: its own (they take L) and its async fns'."""
    out = ["@cuda.jit(device=True)", f"def run_parallel_{g.name}(command, w, lane, G, L):"]
    for loop in shared.parallel:
        owner = groups.group_of_function(shared.plan, loop.fn)
        if loop.bulk or loop.inline or (owner is not None and owner.name != g.name):
            continue  # (an inline loop's poll calls it itself: codegen/warppoll.py)
        out.append(f"    if command == {loop.gid}:")
        locals_ = ", L" if owner else ""
        out.append(f"        par_{loop.gid}(w, lane, G.exec.PARGS_I[w], G.exec.PARGS_F[w], G{locals_})")
    out.append("    return")
    return out


def _ready(plan: Plan, g: GroupDef, load: str) -> str:
    """Device code: group ``g`` has an unclaimed instance and its predecessors are done."""
    first = _tasks(plan, g)[0]
    preds = " and ".join(f"{load}(PRED, {t.index}) == 0" for t in _tasks(plan, g))
    return f"dl.ld(CURSOR, {first.index}) < {g.count} and {preds}"


def _tasks(plan: Plan, g: GroupDef) -> list[TaskDef]:
    return [t for t in plan.tasks if t.group == g.name]


def _claim(plan: Plan) -> list[str]:
    out = [
        "@cuda.jit(device=True)",
        "def group_claim(G):",
        "    # thread 0: the next instance of a group that may start, as group << 32 | instance, or -1.",
        "    # The group's cursor is its first task's (claim takes no group task); the acquire of",
        "    # PRED pairs with complete's decrements: the predecessors' writes",
        "    CURSOR, PRED = G.sched.CURSOR, G.sched.PRED",
    ]
    for k, g in enumerate(plan.groups):
        if g.count == 0 or g.warps == 0:  # nothing to run (decision 61): never claimed
            continue
        out.append(f"    if {_ready(plan, g, 'dl.ld_acquire')}:  # group {g.name}")
        out.append(f"        i = dl.add(CURSOR, {_tasks(plan, g)[0].index}, int64(1))")
        out.append(f"        if i < {g.count}:")
        out.append(f"            return int64({k} << 32) + i")
    out.append("    return int64(-1)")
    return out


def _wanted(plan: Plan) -> list[str]:
    ready = " or ".join(f"({_ready(plan, g, 'dl.ld')})" for g in plan.groups if g.warps and g.count)
    return [
        "@cuda.jit(device=True)",
        "def group_wanted(w, G):",
        "    # an executor's service point: whether its block should meet for a group instance",
        "    # (another warp of the block asked already, or one may start now: it asks); a spare",
        "    # warp of a block that runs an instance (WANT_BUSY) leaves only once that has ended",
        "    want = group_want(w, 0, G)",
        "    if want != 0:",
        "        return want != WANT_BUSY",
        "    CURSOR, PRED = G.sched.CURSOR, G.sched.PRED",
        f"    if {ready or 'False'}:",
        "        group_want(w, 1, G)",
        "        return True",
        "    return False",
    ]


def _runner(shared: Shared, g: GroupDef, k: int) -> list[str]:
    plan = shared.plan
    line = source_line_text(plan.source, g.span.line)
    out = [
        "@cuda.jit(device=True)",
        f"def run_group_{g.name}(k, w, lane, G, L, GW, turn, FI):",
        f"    # line {g.span.line}: {line}",
        f"    # instance k of {g.count}: {g.warps} warps, {g.shared_bytes} bytes of shared memory",
        "    t = cuda.threadIdx.x",
        "    nt = cuda.blockDim.x",
        *groups.reset_lines(g, "    "),
        *pinned.reset_lines(plan, g),
        "    if t < LANES:",
        "        GW[t] = -1  # each warp's wait (runtime/state.py, groups): none yet",
        "    if t == 0:",
        f"        GW[GW_LIVE] = {g.warps}  # its warps still running a task instance",
        "    cuda.syncthreads()  # its locals are fresh before any of its tasks starts",
        "    # the task layout turned round the block's warps (runtime/state.py, TURN): each",
        "    # task's warps spread over the SM's four schedulers across the blocks that share it",
        "    wl = (t // LANES + turn) % (nt // LANES)",
    ]
    slots = pinned.task_slots(plan, g)
    for j, t in enumerate(_tasks(plan, g)):
        kw = "if" if j == 0 else "elif"
        lo, hi = slots[t.name], slots[t.name] + t.per_copy
        out.append(f"    {kw} wl < {hi}:  # task {t.name}: warps {lo}..{hi - 1}")
        out.append(f"        inst = int64({t.first_instance}) + k * {t.per_copy} + (wl - {lo})")
        out.append(f"        pinned_{g.name}(inst, w, lane, G, L, GW)")
        out += pinned.keep_lines(shared, g, t, "        ")
        out.append("        if dl.SIM and lane == 0 and cuda.atomic.add(GW, GW_LIVE, -1) == 1:")
        out.append("            group_want(w, 1, G)  # the instance has ended: its block's spare warps leave")
        out.append("        return True")
    out.append("    return False  # a spare warp: on the simulator, it runs the executor until the instance ends")
    return out


def _has_channels(plan: Plan) -> bool:
    return any(g.channels for g in plan.groups)


def _run_group(plan: Plan) -> list[str]:
    args = ", ".join(f"L_{g.name}" for g in plan.groups)
    out = ["@cuda.jit(device=True)", f"def run_group(pick, w, lane, G, GW, turn, FI, {args}):", "    g = pick >> 32"]
    out.append("    k = pick & 0xFFFFFFFF")
    for j, grp in enumerate(plan.groups):
        out += [f"    if g == {j}:", f"        return run_group_{grp.name}(k, w, lane, G, L_{grp.name}, GW, turn, FI)"]
    out.append("    return False")
    if not _has_channels(plan):
        return out
    # once the block has met after an instance: its channels' mbarriers end (lch_retire)
    out += ["", "", "@cuda.jit(device=True)", f"def retire_group(pick, {args}):"]
    out += ["    t = cuda.threadIdx.x", "    nt = cuda.blockDim.x", "    g = pick >> 32"]
    for j, grp in enumerate(plan.groups):
        lines = groups.retire_lines(grp, "        ", f"L_{grp.name}")
        if lines:
            out += [f"    if g == {j}:", *lines]
    return out


WANT = """
@cuda.jit(device=True)
def group_want(w, op, G):
    # the block's WANT word, in EXS's row of its first warp (runtime/state.py, groups): 0 reads
    # it, 1 sets it, 2 clears it, 3 marks the block busy with a group instance (WANT_BUSY)
    per = cuda.blockDim.x // LANES
    first = (w // per) * per
    if op != 0:
        ordr.exch(G.exec.EXS, (first, EXS_WANT), int64(1 if op == 1 else (WANT_BUSY if op == 3 else 0)))
    return dl.ld(G.exec.EXS, (first, EXS_WANT))
"""


PINNED = """
@cuda.jit(device=True)
def pinned_{g}(inst, w, lane, G, L, GW):
    # One task instance of a group on this warp, from its start to its end.
    # {who}; a pending poll is tried again (its local channels wake nobody: this is
    # their wake), now and then with the service of timers and the host and a look at the run's end.
    CMD, CTL = G.exec.CMD, G.sched.CTL
    wl = cuda.threadIdx.x // LANES
    if lane == 0:
        G.sched.ST[inst] = dl.RUNNING
    spins = int64(0)
    v = int64(0)
    while True:
        command = int64(0)
{poll}
            if r != {fork} and r != {ready} and r != {abort}:
                code = local_wait_{g}(inst, G)
                if code >= 0:  # stuck at view v unless another warp changes a local channel
                    G.wait.WAITON[inst] = -2 - code
                    ordr.st_release_cta(GW, wl, v)
                    if stuck_{g}(GW, L):
                        if dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_DEADLOCK)) == 0:
                            CTL[dl.CTL_DETAIL] = inst
                        command = dl.CMD_EXIT
                    elif QUIET_NAPS > 0:
                        # a poll again before another warp moves a local channel would find
                        # the same: nap until one does (a poll reloads its frame from global
                        # memory and takes issue slots from the block's working warps)
                        naps = 0
                        while naps < QUIET_NAPS and view_{g}(L) == v:
                            dl.pause(QUIET_NAP_NS)
                            naps += 1
                else:
                    ordr.st_release_cta(GW, wl, int64(-1))
            else:
                ordr.st_release_cta(GW, wl, int64(-1) if r != {ready} else int64(-2))
            if command != 0:
                pass
            elif r == {ready}:
                G.sched.ST[inst] = dl.DONE
                dx.complete(inst, G.sched, TASKS, SUCC)
                dx.flush_done(int64(1), G.sched)
                command = dl.CMD_EXIT
            elif r == {fork}:
                command = CMD[w, dl.CMD_COMMAND]
            elif r == {abort}:
                dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_TIMEOUT))
                command = dl.CMD_EXIT
            else:
                spins += 1
                if spins % dl.SPIN_LOOK_EVERY == 0:
                    if HAS_SERVICE: service(w, G)
                    if dl.overdue(CTL):
                        dl.cas(CTL, dl.CTL_EXIT, int64(0), int64(dl.EXIT_TIMEOUT))
                        command = dl.CMD_EXIT
            CMD[w, dl.CMD_COMMAND] = command
{tail}
"""

# the lane-0 poll: the lanes run what it hands them (a parallel loop: FORK)
LANE0 = {
    "who": "Lane 0 polls it",
    "poll": """        if lane == 0:
            v = view_{g}(L)
            r = dispatch_{g}(inst, w, G, L)""",
    "tail": """        command = dl.warp_command(CMD, w, command)  # lane 0's, to every lane by shuffle
        if command == dl.CMD_EXIT:
            return
        if command > 0:
            run_parallel_{g}(command, w, lane, G, L)
        dl.warp_sync(CMD, w)""",
}
# the poll on all 32 lanes (codegen/warppoll.py): its parallel loops inside it, never a FORK
ALL_LANES = {
    "who": "All 32 lanes poll it (codegen/warppoll.py), lane 0 says what follows",
    "poll": """        if lane == 0:
            v = view_{g}(L)
        r = dispatch_{g}(inst, w, G, L)
        dl.warp_sync(CMD, w)  # every lane's frame stores, before lane 0 reads the task's state
        if lane == 0:""",
    "tail": """        if dl.warp_command(CMD, w, command) == dl.CMD_EXIT:  # lane 0's, to every lane
            return""",
}


KERNEL = """
@cuda.jit(device=True)
def run_executor(w, lane, G, timeout_ns):
    # the executor on this warp (lane 0 schedules and polls, the 32 lanes run what it hands
    # them) until the run ends or its block meets for a group instance
    CMD = G.exec.CMD
    while True:
        command = int64(0)
        if lane == 0:
            command = executor(w, G, timeout_ns)
        {meet}
        if command == dl.CMD_EXIT or command == CMD_GROUPS:
            return
        run_parallel(command, w, lane, G)
        dl.warp_sync(CMD, w)


@cuda.jit(cache=True, **KERNEL_OPTIONS)
def gasync_kernel(G, timeout_ns, mode):
    # Every block, in turns: a group instance if one may start (all its warps), else the
    # executor on every warp (lane 0 schedules and polls, the 32 lanes run what it hands
    # them) until the run ends or a group instance may start (codegen/groupkernel.py).
    CMD, CTL = G.exec.CMD, G.sched.CTL
    tid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    w = tid // LANES
    lane = tid % LANES
    BW = cuda.shared.array(BW_WORDS, int64)  # PICK, STOP, TURN (runtime/state.py, groups)
    GW = cuda.shared.array(GW_WORDS, int64)  # each warp's wait in a group instance; GW_LIVE
{alloc}
{frames}
    if tid == 0 and timeout_ns > 0:
        dl.cas(CTL, dl.CTL_DEADLINE, int64(0), dl.now_ns() + timeout_ns)
    if cuda.threadIdx.x == 0:
        BW[BW_TURN] = dgroups.warp_slot() // 4  # the loop's first syncthreads publishes it
    while True:
        if cuda.threadIdx.x == 0:
            BW[BW_STOP] = dl.ld(CTL, dl.CTL_EXIT)
            BW[BW_PICK] = group_claim(G) if BW[BW_STOP] == 0 else int64(-1)
            group_want(w, 3 if BW[BW_PICK] >= 0 else 2, G)
        cuda.syncthreads()
        if BW[BW_STOP] != 0:
            return
        pick = BW[BW_PICK]
        if pick >= 0:
            # a warp beyond the instance's tasks runs the executor until the instance ends on
            # the simulator's one block alone (on the GPU other blocks run the ungrouped tasks,
            # and its kernel keeps the registers of an instance's warps: B7 127, not 151)
            if not run_group(pick, w, lane, GF, GW, BW[BW_TURN], G.frames.FI, {locals}) and dl.SIM:
                run_executor(w, lane, G, timeout_ns)
        else:
            run_executor(w, lane, G, timeout_ns)
        cuda.syncthreads()  # the block meets: every warp has left what it ran
{retire}"""

# with local channels: an instance's channels' mbarriers end once the block has met after it
RETIRE = """        if pick >= 0:
            retire_group(pick, {locals})  # the instance's channels' mbarriers end; the next syncthreads follows
"""


# each warp's mbarrier for its bulk copies (groups.BULK_COPY), then its initialisation
MBARRIERS = (
    "    MB = cuda.shared.array(MB_WORDS, int64)  # each warp's mbarrier for its bulk copies (runtime/devicevec.py)",
    "    if BULK_COPY and lane == 0:",
    "        dv.mbar_init(MB, cuda.threadIdx.x // LANES)  # its own warp's; the loop's first syncthreads follows",
)


def with_groups(plan: Plan, executor_text: str) -> str:
    """The executors of kernel.py with this module's kernel in place of the plain one."""
    out = executor_text  # (its service point asks group_wanted: codegen/kernel.py, executor_fn)
    cut = out.index("@cuda.jit(cache=True)\ndef gasync_kernel")
    lines = groups.alloc_lines(plan, "    ")
    alloc = "\n".join([MBARRIERS[0], *lines, *MBARRIERS[1:]] if groups.BULK_COPY else lines)
    text = KERNEL.replace("{alloc}", alloc).replace("{retire}", RETIRE if _has_channels(plan) else "")
    text = text.replace("{locals}", ", ".join(f"L_{g.name}" for g in plan.groups))
    text = text.replace("{frames}", "\n".join(pinned.kernel_lines(plan)))
    text = text.replace("{meet}", kernel.meet(" " * 8))
    return out[:cut] + text.lstrip("\n")


def header(plan: Plan) -> list[str]:
    if not plan.groups:
        return []
    return [
        "from gasync.runtime import devicegroups as dgroups",
        "from gasync.runtime import order as ordr",
        "from gasync.runtime.state import BW_PICK, BW_STOP, BW_TURN, BW_WORDS, CMD_GROUPS, Frames",
        f"from gasync.runtime.state import GW_LIVE, GW_WORDS, {'MB_WORDS, ' if groups.BULK_COPY else ''}WANT_BUSY",
        "from gasync.runtime.words import EXS_WANT",
    ]
