"""Frame layout, the way Rust lays out generators.

A frame is two arrays of 8-byte words: int words (bool and integers, and
word 0, the state) and float words. A function's frame holds, in order: the
state, its result (if it has one), every local, and one *child region*: the
space for the futures it awaits. Awaits at different points are never live at
once, so their children overlap (the region is as big as the largest); the
children of one ``join`` or ``select`` run together, so they sit side by
side. A future that never suspends (an async fn with no suspending await)
needs no frame: it runs to completion inside the caller's poll.

Sizes of the built-in futures, in int words: ``yield_now`` 1 (has it
yielded), ``sleep`` 1 (deadline), ``recv``/``wait`` 2 and ``send`` 2 plus a float
word (the value, computed when the send starts), ``join``/``select`` 1 (done mask) plus their children, an
async block 1 (its state) plus its own child region.
"""

from __future__ import annotations

from collections.abc import Iterator

from gasync.planner import ir
from gasync.planner.model import FrameLayout, Function
from gasync.planner.walk import stmts_in

Size = tuple[int, int]
LEAF_SIZE: dict[type, Size] = {ir.YieldNow: (1, 0), ir.Sleep: (1, 0), ir.Send: (2, 1), ir.Recv: (2, 0), ir.Wait: (2, 0)}
FOR_AWAIT_SIZE: Size = (2, 0)


def is_float(ty: ir.Ty) -> bool:
    return ty in ir.FLOATS


def future_size(fut: ir.Future, frames: dict[str, FrameLayout], suspends: dict[str, bool]) -> Size:
    """Words a future's own frame needs when it is awaited."""
    if isinstance(fut, ir.AsyncCall):
        if not suspends[fut.fn]:
            return (0, 0)
        fr = frames[fut.fn]
        return (fr.n_int, fr.n_float)
    if isinstance(fut, ir.Join):
        ni, nf = 1, 0
        for sub in fut.futures:
            a, b = future_size(sub, frames, suspends)
            ni, nf = ni + a, nf + b
        return (ni, nf)
    if isinstance(fut, ir.AsyncBlock):
        a, b = region_size(fut.body, frames, suspends)
        return (1 + a, b)
    return LEAF_SIZE[type(fut)]


def site_sizes(
    body: tuple[ir.Stmt, ...], frames: dict[str, FrameLayout], suspends: dict[str, bool]
) -> Iterator[tuple[int, Size]]:
    """(site, size) for each await point directly in ``body`` (not inside async blocks)."""
    for s in stmts_in(body, into_futures=False):
        if isinstance(s, ir.AwaitS) and s.suspends:
            yield s.site, future_size(s.future, frames, suspends)
        elif isinstance(s, ir.Select):
            ni, nf = 1, 0
            for arm in s.arms:
                a, b = future_size(arm.future, frames, suspends)
                ni, nf = ni + a, nf + b
            yield s.site, (ni, nf)
        elif isinstance(s, ir.ForAwait):
            yield s.site, FOR_AWAIT_SIZE


def region_size(body: tuple[ir.Stmt, ...], frames: dict[str, FrameLayout], suspends: dict[str, bool]) -> Size:
    """The child region: as large as the largest child, since children overlap."""
    ni = nf = 0
    for _, (a, b) in site_sizes(body, frames, suspends):
        ni, nf = max(ni, a), max(nf, b)
    return ni, nf


def layout(fn: Function, frames: dict[str, FrameLayout], suspends: dict[str, bool]) -> FrameLayout:
    """Lay out one function's frame; ``frames`` already holds its callees'."""
    n_int, n_float = 1, 0  # int word 0 is the state
    result = None
    if fn.ret != "unit":
        result = ("float", n_float) if is_float(fn.ret) else ("int", n_int)
        if is_float(fn.ret):
            n_float += 1
        else:
            n_int += 1
    int_slots, float_slots = [], []
    for name, ty in fn.locals:
        if is_float(ty):
            float_slots.append((name, n_float))
            n_float += 1
        else:
            int_slots.append((name, n_int))
            n_int += 1
    children = tuple((site, n_int, n_float) for site, _ in site_sizes(fn.body, frames, suspends))
    ri, rf = region_size(fn.body, frames, suspends)
    return FrameLayout(fn.name, tuple(int_slots), tuple(float_slots), result, children, n_int + ri, n_float + rf)
