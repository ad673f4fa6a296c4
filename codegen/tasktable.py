"""The generated module's per-task tables, which the executor (codegen/kernel.py) calls:
which task an instance belongs to, the poll of an instance (``dispatch``), what an
instance's end releases (``complete``: its task's successors' predecessor counters), and
the claim of fresh instances in chunks (``claim``)."""

from __future__ import annotations

from gasync.codegen.machine import READY, Shared
from gasync.planner.model import TaskDef


def chunk_of(task: TaskDef) -> str:
    """How many fresh instances one claim takes, as device code.

    A quarter of a fair share (count / executors), at least 1 and at most 1024:
    large arrays are claimed with few atomics on their cursor (one counter that
    every executor hits), small ones still spread over many warps.
    """
    if task.count < 64:
        return "int64(1)"
    return f"max(int64(1), min(int64(1024), int64({task.count}) // (4 * sched.CTL[dl.CTL_EXECUTORS])))"


def task_of(tasks: tuple[TaskDef, ...]) -> list[str]:
    out = ["@cuda.jit(device=True)", "def task_of(inst):"]
    for t in tasks:
        if t.count:
            out.append(f"    if inst < {t.first_instance + t.count}:")
            out.append(f"        return {t.index}")
    out.append("    return 0")
    return out


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


def completion(shared: Shared, tasks: tuple[TaskDef, ...]) -> list[str]:
    # these take the one group of G they read: a call passing G costs compiling (scripts/typing_probe.py)
    out = ["@cuda.jit(device=True)", "def complete(inst, sched):"]
    index = {t.name: t for t in tasks}
    for t in tasks:
        succs = [s for s in tasks if t.name in s.after]
        if not succs or t.count == 0:
            continue
        end = t.first_instance + t.count
        out.append(f"    if {t.first_instance} <= inst < {end}:  # task {t.name}")
        # acquire-release: the last predecessor's decrement carries every predecessor's
        # writes to claim's acquire of PRED (a task with no successor needs none: the
        # kernel's end publishes its writes to the host)
        for s in succs:
            out.append(f"        if dl.add_acq_rel(sched.PRED, {s.index}, int64(-1)) == 1:  # {s.name} may start")
            out.append(f"            dl.add(sched.CTL, dl.CTL_INFLIGHT, int64({index[s.name].count}))")
    out.append("    return  # the executor counts finished instances in batches (flush_done)")
    return out


def claim(tasks: tuple[TaskDef, ...]) -> list[str]:
    out = [
        "@cuda.jit(device=True)",
        "def claim(sched):",
        "    # (lo, hi, left): a range of fresh instances of a task that may start (or an empty",
        "    # one), and whether any task still has unclaimed instances (0 once all are taken)",
    ]
    out.append("    CURSOR, PRED = sched.CURSOR, sched.PRED")
    for t in tasks:
        if t.count == 0:
            continue
        # the acquire of PRED pairs with complete's decrements: the predecessors' writes
        out.append(f"    if dl.ld(CURSOR, {t.index}) < {t.count} and dl.ld_acquire(PRED, {t.index}) == 0:")
        out.append(f"        n = {chunk_of(t)}")
        out.append(f"        lo = dl.add(CURSOR, {t.index}, n)")
        out.append(f"        if lo < {t.count}:")
        out.append(f"            return {t.first_instance} + lo, {t.first_instance} + min(lo + n, {t.count}), int64(1)")
    left = " or ".join(f"dl.ld(CURSOR, {t.index}) < {t.count}" for t in tasks if t.count) or "False"
    out.append(f"    return int64(0), int64(0), int64(1) if {left} else int64(0)")
    out += ["", "", "@cuda.jit(device=True)", "def claimable(sched):"]
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
