"""The generated module's per-task tables, which the executor (codegen/kernel.py) reads: the
poll of an instance (``dispatch``), and the rows of TASKS and SUCC from which
runtime/deviceexec.py claims fresh instances and counts an instance's end (its task's
successors' predecessor counters)."""

from __future__ import annotations

from gasync.codegen.machine import READY, Shared
from gasync.planner.model import Plan, TaskDef


def task_dispatch(shared: Shared, tasks: tuple[TaskDef, ...]) -> list[str]:
    out = ["@cuda.jit(device=True)", "def dispatch(inst, w, G):"]
    jb = shared.jb_arg("int64(0)")  # a task's own bulk jobs start at its first row
    for t in tasks:
        if t.count == 0:
            continue
        fr = shared.frames[t.name]
        end = t.first_instance + t.count
        out.append(f"    if inst < {end}:  # task {t.name}, instances {t.first_instance}..{end - 1}")
        fb_i = f"FB_I_{t.name} + (inst - {t.first_instance}) * {fr.n_int}"
        fb_f = f"FB_F_{t.name} + (inst - {t.first_instance}) * {fr.n_float}"
        deferred = shared.shapes.deferring.get(t.name, ()) if shared.shapes is not None else ()
        # the run of sends of a deferring sender ends with the poll: its waiting holders are woken
        looks = [f"        dsync.look_for_holders(G.sched, QMASK, G.chan, CH_{c})" for c in deferred]
        if shared.trace:
            out.append(f"        fb = {fb_i}")
            out.append("        s0 = G.frames.FI[fb]")
            out.append("        t0 = dl.now_ns()")
            out.append(f"        r = poll_{t.name}(inst, w, fb, {fb_f}, {jb}G)")
            out += looks
            out += traced_poll_end(shared, t)
            out.append("        return r")
        elif looks:
            out.append(f"        r = poll_{t.name}(inst, w, {fb_i}, {fb_f}, {jb}G)")
            out += [*looks, "        return r"]
        else:
            out.append(f"        return poll_{t.name}(inst, w, {fb_i}, {fb_f}, {jb}G)")
    out.append(f"    return {READY}")
    return out


def traced_poll_end(shared: Shared, task: TaskDef) -> list[str]:
    """A traced poll's record: the event with the run queue's length and the instances in
    flight, then the occupancy of each channel the task uses (runtime/state.py, Trace)."""
    out = ["        k = dsync.trace_poll(G.TRACE, G.sched, w, inst, s0, G.frames.FI[fb], t0, r)"]
    for j, c in enumerate(shared.trace_channels[task.index]):
        name = shared.plan.channels[c].name
        out.append(f"        dsync.trace_occupancy(G.TRACE, k, {j}, G.chan, CH_{name})  # channel {name}")
    return out


# the executor's numbers (runtime/deviceexec.py: EX_*, in this order; tests/unit/test_deviceexec.py)
EX_NAMES = ("TOTAL_INSTANCES", "QMASK", "IDLE_BACKOFF_MAX")
# a row of TASKS (deviceexec.TASK_*): first instance, count, where its successors start in SUCC
# (a list ended by -1), claimed by the executor
TASK_COLUMNS = ("first", "count", "succ", "claimed")


def tables(plan: Plan, *, has_service: bool, traced: bool) -> list[str]:
    """The executor's constants and tables (runtime/deviceexec.py): the program's own part of
    the loop that is compiled once for every program, as arguments of fixed types."""
    out = [
        "# the executor's constants and tables (runtime/deviceexec.py: EX_*, TASK_*), the program's",
        "# own part of a loop that is compiled once for every program",
        f"EX = ({', '.join(EX_NAMES)})",
        f"HAS_POINT = {has_service or bool(plan.groups)}  # a service point: signals, sleepers or groups",
        f"TRACED = {traced}",
        "ex_enter, ex_next, ex_polled = dx.executor_for(",
        "    bulk=HAS_BULK, spin=WAIT_IN_PLACE, point=HAS_POINT, service=HAS_SERVICE, traced=TRACED",
        ")",
        f"TASKS = np.array(  # a row per task: {', '.join(TASK_COLUMNS)}",
        "    [",
    ]
    succ = [-1]  # row 0: no successor
    for row, t in enumerate(plan.tasks):
        assert t.index == row, (t.name, t.index, row)  # CURSOR's and PRED's index
        after = [s for s in plan.tasks if t.name in s.after]
        at = len(succ) if after else 0
        if after:
            succ += [*(s.index for s in after), -1]
        claimed = int(t.group is None and t.count > 0)  # a group's instances are claimed by group_claim
        then = f": then {', '.join(s.name for s in after)}" if after else ""
        out.append(f"        [{t.first_instance}, {t.count}, {at}, {claimed}],  # task {t.name}{then}")
    if not plan.tasks:
        out.append("        [0, 0, 0, 0],  # (no task: a row all the same)")
    out += ["    ],", "    dtype=np.int64,", ")"]
    out.append(
        f"SUCC = np.array([{', '.join(map(str, succ))}], dtype=np.int64)  # each task's successors, -1 after each list"
    )
    return out


def claimable(tasks: tuple[TaskDef, ...]) -> list[str]:
    out = ["@cuda.jit(device=True)", "def claimable(sched):"]
    out += [
        "    # (claims so far, whether a task that may start has unclaimed instances): a hint for",
        "    # an await waiting in place, which lets fresh instances wait only while others claim",
        "    CURSOR, PRED = sched.CURSOR, sched.PRED",
    ]
    counted = [t for t in tasks if t.count]
    total = " + ".join(f"dl.ld(CURSOR, {t.index})" for t in counted) or "0"
    waiting = " or ".join(f"(dl.ld(CURSOR, {t.index}) < {t.count} and dl.ld(PRED, {t.index}) == 0)" for t in counted)
    out.append(f"    return int64({total}), {waiting or 'False'}")
    return out
