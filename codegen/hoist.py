"""Bounds checks hoisted out of a map: one look at the ends of the range for the whole loop.

A ``parallel for`` (or ``bulk for`` chunk) whose body is a map (codegen/maps.py) and whose
every access left unproven by the planner has indices *affine* in the loop's variable (sums
and differences of it, of the loop's captured locals and of integer literals, a product
only by a factor without the variable; all i64) touches, for each index, values between
those at the first and the last iteration of the warp's range. So where every such access
is inside its buffer at both ends (``db.within``: a compare per dimension, no fault
recorded), it is inside for every iteration, and the warp runs the loop without checks
(``itu_<gid>``, the unchecked helpers); otherwise it runs the checked loop as before, which
stops the run at the first faulting access with its site, index and instance. B7's loops
(y = 2x + 1 through shared memory, ``stage[s, i]`` and ``x[t * TILE + i]``): each check
cost more than the iteration's own work (bench/NOTES.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gasync.codegen.exprs import buffer_ref
from gasync.codegen.machine import Emitter, ParallelLoop, Shared
from gasync.planner import ir
from gasync.planner.walk import exprs_of, subexprs

HOIST = True  # False: every iteration checks its own accesses (what bench/NOTES.md measured against)


INTS = ("i32", "i64", "u32", "u64")
_PURE = (ir.Lit, ir.Var, ir.Unary, ir.Binary, ir.Cast)  # no load: another task may write the buffer meanwhile


def loop_invariant(e: ir.Expr, invariant: set[str]) -> bool:
    """Whether ``e`` has the same value in every iteration of a loop that captures
    ``invariant``: literals and those locals, with pure operations."""
    return all(isinstance(x, _PURE) and (not isinstance(x, ir.Var) or x.name in invariant) for x in subexprs(e))


def _affine(e: ir.Expr, var: str, invariant: set[str]) -> bool:
    """Whether ``e`` is an i64 affine function of ``var``, its other leaves ``invariant``; a
    part without ``var`` may be of any integer type (``stage[s, i]`` with ``s`` an i32): it
    is one value for the whole loop."""
    if getattr(e, "ty", None) in INTS and not _mentions(e, var) and loop_invariant(e, invariant):
        return True
    if getattr(e, "ty", None) != "i64":
        return False
    if isinstance(e, ir.Lit):
        return not isinstance(e.value, bool)
    if isinstance(e, ir.Var):
        return e.name == var or e.name in invariant
    if isinstance(e, ir.Cast):
        return getattr(e.expr, "ty", None) == "i64" and _affine(e.expr, var, invariant)
    if isinstance(e, ir.Unary):
        return e.op == "-" and _affine(e.operand, var, invariant)
    if isinstance(e, ir.Binary):
        if e.op in ("+", "-"):
            return _affine(e.left, var, invariant) and _affine(e.right, var, invariant)
        if e.op == "*":
            free = [not _mentions(x, var) for x in (e.left, e.right)]
            return any(free) and _affine(e.left, var, invariant) and _affine(e.right, var, invariant)
    return False


def _mentions(e: ir.Expr, var: str) -> bool:
    return any(isinstance(x, ir.Var) and x.name == var for x in subexprs(e))


def checked_accesses(shared: Shared, body: tuple[ir.Stmt, ...]) -> list[ir.Load | ir.Store]:
    """The accesses of a map's ``body`` that its checks test at run time."""
    checks = shared.checks
    out: list[ir.Load | ir.Store] = []
    if checks is None:
        return out
    for st in body:
        if isinstance(st, ir.Store) and checks.wanted(st):
            out.append(st)
        for e in exprs_of(st):
            out += [x for x in subexprs(e) if isinstance(x, ir.Load) and checks.wanted(x)]
    return out


def hoistable(shared: Shared, loop: ParallelLoop) -> bool:
    """Whether the checks of map ``loop`` may be looked at once, at the ends of its range."""
    s = loop.loop
    if not HOIST or shared.checks is None or not shared.checks.enabled or s.reduce is not None:
        return False
    if any(isinstance(st, ir.Eval) for st in s.body):  # a combined update: the loop keeps its checks
        return False
    accesses = checked_accesses(shared, s.body)
    invariant = {n for n, _ in loop.captured}
    return bool(accesses) and all(_affine(ix, s.var, invariant) for a in accesses for ix in a.index)


def range_lines(shared: Shared, em: Emitter, loop: ParallelLoop) -> list[str]:
    """``inrange``: whether every checked access of the map lies inside its buffer at the first
    and the last iteration of the warp's range ``[k - lane, hi)`` (an empty range: True)."""
    s = loop.loop
    accesses = checked_accesses(shared, s.body)
    out = [
        "    # its checks, hoisted (codegen/hoist.py): indices affine in the loop's variable lie",
        "    # inside their buffers for the whole range if they do at its two ends",
        "    inrange = True",
        "    if k - lane < hi:",
    ]
    for end in ("k - lane", "hi - 1"):
        out.append(f"        {em.assign(s.var, end)}")
        tests = " and ".join(f"db.within({buffer_ref(a.buf)}, {em.r.index_tuple(a.index)})" for a in accesses)
        out.append(f"        inrange = inrange and {tests}")
    return out


@contextmanager
def unchecked(shared: Shared) -> Iterator[None]:
    """While the loop's unchecked variant is rendered: no access is checked, and the
    iteration helpers take their unchecked names (``helper_name``)."""
    checks = shared.checks
    assert checks is not None
    checks.enabled, checks.hoisted = False, True
    try:
        yield
    finally:
        checks.enabled, checks.hoisted = True, False


def helper_name(shared: Shared, base: str, gid: int) -> str:
    """``it_<gid>`` (``vit_``), or ``itu_<gid>`` (``vitu_``) for a hoisted loop's unchecked variant."""
    hoisted = shared.checks is not None and shared.checks.hoisted
    return f"{base}{'u' if hoisted else ''}_{gid}"
