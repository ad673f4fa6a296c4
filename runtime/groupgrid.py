"""What a launch of a program with groups needs (docs/groups.md): blocks that hold its largest
group instance, and the queue executor. No Numba here."""

from __future__ import annotations

from gasync.planner.model import Plan
from gasync.runtime.errors import DeviceError, InputError, worded
from gasync.runtime.state import BW_WORDS

# What a block's static shared arrays may hold on the GPU. The H200 gives a block up to 227 KiB
# (the planner's limit, planner/groups.py), but only as dynamic shared memory with the
# kernel's opt-in attribute, which the launch does not set yet (docs/groups.md, Known limits):
# a kernel over this fails in the driver's ptxas, so the launch says so first.
STATIC_SHARED = 48 * 1024
KERNEL_SHARED = 8 * (BW_WORDS + 32)  # the block words and each warp's wait word (codegen/groupkernel.py)


def group_warps(plan: Plan) -> int:
    """The warps a block needs for the program's largest group instance (0: no group)."""
    return max((g.warps for g in plan.groups), default=0)


def check_executor(plan: Plan, executor: str) -> None:
    """A program with groups runs the queue executor (docs/language.md, decision 54)."""
    if plan.groups and executor == "spin":
        raise worded(
            InputError("executor='spin' does not run groups: a program with groups runs the queue executor"),
            "--executor spin does not run groups: a program with groups runs the queue executor",
        )


def fit_error(plan: Plan, warps: int, regs: int) -> DeviceError:
    """No block of ``warps`` warps fits an SM of this GPU: the group's registers (or shared memory)."""
    g = max(plan.groups, key=lambda g: g.warps)
    where = f"{plan.path}:{g.span.line}:{g.span.column}: " if g.span.line else ""
    return DeviceError(
        f"{where}group '{g.name}' does not fit one SM of this GPU: a block of {warps} warps at {regs} registers"
        f" per thread needs {warps * 32 * regs} registers, and {g.shared_bytes} bytes of shared memory; give the"
        " group fewer tasks"
    )


def check_shared(plan: Plan) -> None:
    """On the GPU: every group's shared arrays (the kernel declares them all) must fit the
    static limit; else a located error naming the largest group, before any compiling."""
    need = sum(g.shared_bytes for g in plan.groups) + KERNEL_SHARED
    if not plan.groups or need <= STATIC_SHARED:
        return
    g = max(plan.groups, key=lambda g: g.shared_bytes)
    where = f"{plan.path}:{g.span.line}:{g.span.column}: " if g.span.line else ""
    raise DeviceError(
        f"{where}group '{g.name}' needs {g.shared_bytes} bytes of shared memory"
        + (f" (the program's groups {need} with the kernel's own)" if len(plan.groups) > 1 else "")
        + f", and on the GPU this version of gasync gives a block at most {STATIC_SHARED} bytes (48 KiB) of"
        " static shared memory: the H200's 227 KiB needs dynamic shared memory, which the launch does not set up"
        " yet; make the group's local buffers smaller, or run it on the simulator (--backend sim)"
    )
