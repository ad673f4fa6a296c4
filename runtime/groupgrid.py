"""What a launch of a program with groups needs (docs/groups.md): blocks that hold its largest
group instance, its shared memory within the device's, and the queue executor. No Numba here
(the launch hands in its ``cuda``)."""

from __future__ import annotations

from typing import Any

from gasync.codegen import Generated, groups
from gasync.planner.groups import H200_SHARED_PER_BLOCK
from gasync.planner.model import GroupDef, Plan
from gasync.runtime.errors import DeviceError, InputError, worded


def group_warps(plan: Plan) -> int:
    """The warps a block needs for the program's largest group instance (0: no group)."""
    return max((g.warps for g in plan.groups), default=0)


def sim_executors(plan: Plan) -> int:
    """The simulator's one block by default: 2 warps, and where the program has groups and
    ungrouped tasks, one beyond its largest group, which runs the ungrouped tasks while the
    block holds a group instance (one may wait on them)."""
    spare = any(t.group is None and t.count for t in plan.tasks) and group_warps(plan) > 0
    return max(2, group_warps(plan) + 1) if spare else 2


def check_executor(plan: Plan, executor: str) -> None:
    """A program with groups runs the queue executor (docs/language.md, decision 54)."""
    if plan.groups and executor == "spin":
        raise worded(
            InputError("executor='spin' does not run groups: a program with groups runs the queue executor"),
            "--executor spin does not run groups: a program with groups runs the queue executor",
        )


def _at(plan: Plan, g: GroupDef) -> str:
    """``file:line:col: `` of group ``g``, where it has a place."""
    return f"{plan.path}:{g.span.line}:{g.span.column}: " if g.span.line else ""


def fit_error(plan: Plan, warps: int, regs: int) -> DeviceError:
    """No block of ``warps`` warps fits an SM of this GPU: the group's registers (or shared memory)."""
    g = max(plan.groups, key=lambda g: g.warps)
    return DeviceError(
        f"{_at(plan, g)}group '{g.name}' does not fit one SM of this GPU: a block of {warps} warps at {regs} registers"
        f" per thread needs {warps * 32 * regs} registers, and {g.shared_bytes} bytes of shared memory; give the"
        " group fewer tasks"
    )


def shared_limit(cuda: Any) -> int:
    """The shared memory a block may take on the current device (its opt-in maximum,
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 232,448 bytes on an H100 or H200); the H200's, the
    planner's limit, where the device does not say."""
    try:
        return int(cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    except AttributeError:  # a driver binding without the attribute
        return H200_SHARED_PER_BLOCK


def check_shared(gen: Generated, limit: int) -> None:
    """On the GPU: a block's shared memory (the largest group's locals in dynamic shared memory,
    or every group's as static arrays, with the kernel's own words) must fit ``limit``, the
    device's; else a located error naming the largest group, before any compiling."""
    plan = gen.plan
    if not plan.groups:
        return
    own = groups.kernel_shared(plan)
    need = (gen.dynamic_shared or sum(g.shared_bytes for g in plan.groups)) + own
    if need <= limit:
        return
    g = max(plan.groups, key=lambda g: g.shared_bytes)
    raise DeviceError(
        f"{_at(plan, g)}group '{g.name}' needs {g.shared_bytes} bytes of shared memory, {need} with the kernel's own"
        f" {own}, and this GPU gives a block at most {limit} bytes ({limit / 1024:.1f} KiB, its opt-in"
        " maximum); make the group's local buffers smaller"
    )
