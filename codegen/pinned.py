"""A pinned group task's frame in its block's shared memory (docs/groups.md).

A block runs one group instance at a time and a pinned task instance never leaves its warp,
so nothing outside the block reads its frame: the kernel declares a frame area of the largest
group's warps x its largest task frame (``FR_I``, ``FR_F``), the runner zeroes the instance's
rows with its other locals, and the group phase runs with ``GF``, G whose ``frames`` are that
area (the same Numba type as G's, so every poll is one specialisation). A task instance's row
is its warp slot in the group instance. ``SHARED_FRAMES = False`` keeps them in G.frames, as
an executor's tasks' (for measuring the change beside the code before it: scripts/bench_stage.sh).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gasync.planner.model import GroupDef, Plan, TaskDef

if TYPE_CHECKING:
    from gasync.codegen.machine import Shared

SHARED_FRAMES = True


def state_arrays(plan: Plan) -> tuple[str, ...]:
    """G's fields after runtime/state.py's STATE_FIELDS: the buffers, then the shared scalars."""
    return (*(f"B_{b.name}" for b in plan.buffers), *(f"S_{s.name}" for s in plan.shared))


def task_slots(plan: Plan, g: GroupDef) -> dict[str, int]:
    """Each task of ``g``: its first warp slot in a group instance (the tasks in order, each
    ``per_copy`` warps: codegen/groupkernel.py, _runner)."""
    slots, lo = {}, 0
    for t in plan.tasks:
        if t.group == g.name:
            slots[t.name] = lo
            lo += t.per_copy
    return slots


def frame_strides(plan: Plan, g: GroupDef) -> tuple[int, int]:
    """The int and float words of the largest frame among ``g``'s tasks: one warp's row."""
    frames = {fr.fn: fr for fr in plan.frames}
    tasks = [t for t in plan.tasks if t.group == g.name]
    return (
        max((frames[t.name].n_int for t in tasks), default=1),
        max((frames[t.name].n_float for t in tasks), default=0),
    )


def frame_words(plan: Plan) -> tuple[int, int]:
    """The int and float words of the block's frame area: the most any group takes (a warp's
    row each), at least one word each (a shared array cannot be empty)."""
    ni, nf = 1, 1
    for g in plan.groups:
        si, sf = frame_strides(plan, g)
        ni, nf = max(ni, g.warps * si), max(nf, g.warps * sf)
    return ni, nf


def frame_bytes(plan: Plan) -> int:
    """The bytes of the frame area (0 with the frames in G.frames)."""
    return 8 * sum(frame_words(plan)) if SHARED_FRAMES else 0


def frame_row(plan: Plan, g: GroupDef, task: TaskDef, inst: str) -> str:
    """Device code: the row of the frame area that instance ``inst`` of ``task`` takes."""
    lo = task_slots(plan, g)[task.name]
    if task.per_copy == 1:
        return str(lo)
    slot = f"({inst} - {task.first_instance}) % {task.per_copy}"
    return f"({lo} + {slot})" if lo else f"({slot})"


def frame_bases(shared: Shared, g: GroupDef, t: TaskDef, inst: str = "inst") -> tuple[str, str]:
    """Device code: the first int and float word of task instance ``inst``'s frame: its row of
    the frame area (G.frames in the group phase), or its place in the global frames."""
    if SHARED_FRAMES:
        si, sf = frame_strides(shared.plan, g)
        row = frame_row(shared.plan, g, t, inst)
        if row.isdigit():
            return str(int(row) * si), str(int(row) * sf)
        return f"{row} * {si}", f"{row} * {sf}"
    fr = shared.frames[t.name]
    return (
        f"FB_I_{t.name} + ({inst} - {t.first_instance}) * {fr.n_int}",
        f"FB_F_{t.name} + ({inst} - {t.first_instance}) * {fr.n_float}",
    )


def keep_lines(shared: Shared, g: GroupDef, t: TaskDef, ind: str) -> list[str]:
    """Device code: a pinned instance ``inst`` of ``t`` that the run stopped before its end (a
    deadlock, a timeout) copies its row's int words (its state word, a join's done mask) to
    its place in the global frames ``FI``, where the host reads where it waits (runtime/exits.py)."""
    if not SHARED_FRAMES:
        return []  # (its frame is there already)
    row, _ = frame_bases(shared, g, t)
    n = shared.frames[t.name].n_int
    return [
        f"{ind}if lane == 0 and G.sched.ST[inst] != dl.DONE:  # the run stopped it: where it waits, for the host",
        f"{ind}    for j in range({n}):",
        f"{ind}        FI[FB_I_{t.name} + (inst - {t.first_instance}) * {n} + j] = G.frames.FI[{row} + j]",
    ]


def constants(plan: Plan) -> list[str]:
    """The module's sizes of the frame area."""
    if not SHARED_FRAMES:
        return []
    ni, nf = frame_words(plan)
    return [
        "# the pinned tasks' frames, in the block's shared memory: a row of the largest group task's",
        "# frame for each warp of a group instance (codegen/pinned.py)",
        f"FRAME_WORDS_I = {ni}",
        f"FRAME_WORDS_F = {nf}",
    ]


def reset_lines(plan: Plan, g: GroupDef) -> list[str]:
    """Thread t of nt zeroes the instance's frame rows (a task's first poll reads state 0)."""
    if not SHARED_FRAMES:
        return []
    si, sf = frame_strides(plan, g)
    out = [f"    for j in range(t, {g.warps * si}, nt):", "        G.frames.FI[j] = 0"]
    if sf:
        out += [f"    for j in range(t, {g.warps * sf}, nt):", "        G.frames.FF[j] = 0.0"]
    return out


def kernel_lines(plan: Plan) -> list[str]:
    """The kernel's ``GF``: G for the group phase, its frames the block's frame area."""
    if not SHARED_FRAMES:
        return ["    GF = G  # the group phase's state: the pinned tasks' frames in G.frames"]
    from gasync.runtime.state import STATE_FIELDS  # (not at the top: the runtime package imports codegen)

    assert STATE_FIELDS[0] == "frames"
    rest = ", ".join(f"G.{f}" for f in (*STATE_FIELDS[1:], *state_arrays(plan)))
    return [
        "    FR_I = cuda.shared.array(FRAME_WORDS_I, int64)  # the pinned tasks' frames: a row a warp",
        "    FR_F = cuda.shared.array(FRAME_WORDS_F, float64)",
        "    # the group phase's state: G, with that area for its frames (the same type as G's)",
        f"    GF = State(Frames(FR_I, FR_F), {rest})",
    ]
