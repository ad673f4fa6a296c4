"""Bounds checks: the device helpers of an access the planner could not prove in range.

The planner marks each buffer access whose indices it proves inside the buffer
(planner/bounds.py); code generation numbers every other one a check site
(codegen/bounds.py) and reads, writes or updates the element through these,
imported as ``db`` by a generated module that has checks. A check is one
unsigned compare per dimension (a negative index is a huge unsigned one). A
fault does not touch memory: a read gives 0, a write or an atomic is skipped,
and ``bounds_fault`` counts it and stops the run, naming the first one
(runtime/state.py: the FAULT words of CTL; the host words the error).
"""

from __future__ import annotations

from numba import int64, uint64

from gasync.runtime import linked
from gasync.runtime.devicelib import fail
from gasync.runtime.order import INLINE, aand, add, amax, amin, aor, sub
from gasync.runtime.words import CTL_FAULT_DIM, CTL_FAULT_INDEX, CTL_FAULT_SITE, CTL_FAULTS, EXIT_BOUNDS

RMW_ADD, RMW_SUB, RMW_MAX, RMW_MIN, RMW_AND, RMW_OR = 0, 1, 2, 3, 4, 5  # the atomics of rmw (codegen/exprs.py RMW_OF)


@linked.device
def bounds_fault(ctl, site, dim, index, inst):  # type: ignore[no-untyped-def]
    """Index ``index`` of check ``site`` fell outside dimension ``dim``: count it, and stop
    the run naming it and instance ``inst`` if it is the first (state.py: the FAULT words)."""
    add(ctl, CTL_FAULTS, int64(1))
    if fail(ctl, EXIT_BOUNDS, inst):
        ctl[CTL_FAULT_SITE] = site
        ctl[CTL_FAULT_INDEX] = index
        ctl[CTL_FAULT_DIM] = dim


@INLINE
def within(arr, ix):  # type: ignore[no-untyped-def]
    """Whether index tuple ``ix`` lies inside ``arr``: an unsigned compare per dimension (a
    negative index is a huge unsigned one), recording nothing (``inside`` records; a hoisted
    check, codegen/hoist.py, runs its loop checked where this says no). The first three are
    compared at constant positions of the tuples (padded, so that each position exists): a
    loop over ``ix[d]`` made Numba index both tuples at run time, ~70 instructions a check on
    B7's loops (Nsight Compute, bench/NOTES.md), where these are two or three."""
    n = len(ix)
    at = ix + (int64(0), int64(0))
    shape = arr.shape + (1, 1)
    ok = uint64(at[0]) < uint64(shape[0])
    if n > 1:
        ok = ok and uint64(at[1]) < uint64(shape[1])
    if n > 2:
        ok = ok and uint64(at[2]) < uint64(shape[2])
    for d in range(3, n):
        ok = ok and uint64(ix[d]) < uint64(arr.shape[d])
    return ok


@INLINE
def inside(arr, ix, ctl, site, inst):  # type: ignore[no-untyped-def]
    """Whether index tuple ``ix`` lies inside ``arr`` (``within``); if not, the fault is
    recorded with the dimension that is out (found only then, off the path of every check)."""
    if within(arr, ix):
        return True
    for d in range(len(ix)):
        if uint64(ix[d]) >= uint64(arr.shape[d]):
            bounds_fault(ctl, site, d, ix[d], inst)
            break
    return False


@INLINE
def load(arr, ix, ctl, site, inst):  # type: ignore[no-untyped-def]
    """``arr[ix]``, or 0 where ``ix`` lies outside ``arr`` (the fault recorded)."""
    if inside(arr, ix, ctl, site, inst):
        return arr[ix]
    return arr.dtype.type(0)


@INLINE
def rmw(op, arr, i, value, ctl, site, inst):  # type: ignore[no-untyped-def]
    """The atomic ``op`` (an RMW_ constant) of ``value`` on element ``i`` of 1-D ``arr``, giving the
    old value; where ``i`` lies outside ``arr``, nothing is written and it gives 0 (the fault recorded).
    (The index of a 1-D atomic is a plain integer: Numba's CUDA atomics take no 1-tuple.)"""
    if not inside(arr, (i,), ctl, site, inst):
        return arr.dtype.type(0)
    return _apply(op, arr, i, value)


@INLINE
def rmw2(op, arr, ix, value, ctl, site, inst):  # type: ignore[no-untyped-def]
    """``rmw`` on element ``ix`` (a pair) of 2-D ``arr``."""
    if not inside(arr, ix, ctl, site, inst):
        return arr.dtype.type(0)
    return _apply(op, arr, ix, value)


@INLINE
def _apply(op, arr, where, value):  # type: ignore[no-untyped-def]
    if op == RMW_ADD:
        return add(arr, where, value)
    if op == RMW_SUB:
        return sub(arr, where, value)
    if op == RMW_MAX:
        return amax(arr, where, value)
    if op == RMW_AND:
        return aand(arr, where, value)
    if op == RMW_OR:
        return aor(arr, where, value)
    return amin(arr, where, value)
