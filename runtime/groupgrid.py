"""What a launch of a program with groups needs (docs/groups.md): blocks that hold its largest
group instance, and the queue executor. No Numba here."""

from __future__ import annotations

from gasync.planner.model import Plan
from gasync.runtime.errors import DeviceError, InputError, worded


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
