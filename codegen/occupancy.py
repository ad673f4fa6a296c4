"""How many blocks of a program's largest group should share an SM, and the kernel's register
cap that lets them (docs/groups.md, The kernel).

The launch's occupancy query (runtime/launch.py ``_grid``) gives as many blocks an SM as the
kernel's registers and shared memory allow; ptxas picks the registers for the kernel's
longest path, which may keep a second block of a group off an SM that its shared memory
would take. Where a program's group instances outnumber an H200's SMs and more than one of its
largest group's blocks could share an SM (by shared memory, blocks and warps), the kernel is
compiled with ``max_registers`` at what lets that many share one; never below
FEWEST_REGISTERS, where ptxas would spill too much to gain. Limits are the H200's (gpu-notes.md):
the generated code does not depend on the device."""

from __future__ import annotations

from gasync.codegen import groups
from gasync.planner.model import Plan

CAP_REGISTERS = True  # False: never capped (what bench/NOTES.md measured against)
LANES = 32
H200_SMS = 132
SM_REGISTERS = 64 * 1024
SM_SHARED = 228 * 1024  # an SM's shared memory, 1 KiB of it kept by the driver for each block
SM_BLOCKS, SM_WARPS = 32, 64
FEWEST_REGISTERS = 64  # below this ptxas spills too much to gain (B7's kernel: 216 bytes at 96)


def register_cap(plan: Plan) -> tuple[int | None, int]:
    """The registers a thread may take (None: as ptxas likes) and the blocks an SM that leaves
    room for: as many blocks of the largest group as its instances call for on an H200's SMs,
    within an SM's shared memory, blocks and warps. Only where two or more are wanted: a
    block an SM needs no cap (ptxas's own choice is at most 255, and 8 warps of 255 fit)."""
    g = max(plan.groups, key=lambda g: g.warps)
    if g.warps == 0:  # no group has a task instance (decision 61): no block of one to share an SM
        return None, 1
    instances = sum(max(0, grp.stop - grp.start) for grp in plan.groups if grp.warps)
    by_shared = SM_SHARED // (g.shared_bytes + groups.kernel_shared(plan) + 1024)
    blocks = max(1, min(-(-instances // H200_SMS), by_shared, SM_BLOCKS, SM_WARPS // g.warps))
    if not CAP_REGISTERS or blocks < 2:
        return None, blocks
    cap = SM_REGISTERS // (blocks * g.warps * LANES) // 8 * 8  # ptxas allocates 8 at a time
    return (min(cap, 255) if cap >= FEWEST_REGISTERS else None), blocks


def kernel_options(plan: Plan) -> list[str]:
    """The generated module's ``MAX_REGISTERS`` and ``KERNEL_OPTIONS`` (the group kernel's
    decorator takes them; the simulator takes none), with why."""
    cap, blocks = register_cap(plan)
    g = max(plan.groups, key=lambda g: g.warps)
    if cap is not None:
        why = [f"# at most this many registers a thread, so that {blocks} blocks of group {g.name}'s {g.warps} warps"]
        why.append("# can share an SM of an H200 (codegen/occupancy.py)")
    else:
        why = [f"# the kernel's registers as ptxas likes: {blocks} block(s) of group {g.name}'s {g.warps} warps an SM"]
        why.append("# is what its instances call for, or all a cap could give (codegen/occupancy.py)")
    return [
        *why,
        f"MAX_REGISTERS = {cap}",
        'KERNEL_OPTIONS = {} if dl.SIM or MAX_REGISTERS is None else {"max_registers": MAX_REGISTERS}',
    ]
