"""Unroll-and-jam: a parallel loop whose iterations each run one sequential inner loop.

``parallel for e in 0..T * T { let sum = acc[e]; for kk in 0..T { sum = sum + ta[..] * tb[..]; }
acc[e] = sum; }`` (samples/tiled_matmul.gasync) gives each lane one chain of dependent
multiply-adds an iteration: the lane waits out each one's latency, and with a few warps an SM
(a group's compute warps) nothing hides it. Here a lane takes JAM iterations a turn (``e``,
``e + 32``, ...), runs their statements before the inner loop one iteration after the other,
then one inner loop whose body is each iteration's body in turn, then their statements after
it: JAM independent chains in flight. (Loads the iterations share, ``tb[s, kk * T + q]`` of
the same ``q``, are still read once each: LLVM cannot see that ``(e + 32) % T == e % T``.) A
parallel loop's iterations may run in any order and at once
(the lanes already run 32 of them together), so interleaving them is the program's meaning;
each iteration's own statements keep their order, and its sums their order (no reassociation).

The copies' locals are the iteration's own names with ``_j<copy>`` appended; the inner loop's
variable and bound, the same for every copy, are shared. The jammed inner loop is a ``while``
over a counter, not Numba's ``range``: LLVM unrolls a body this large only in part, and
Numba's range loop then keeps its trip-count test in each unrolled turn and its indices
without constant offsets (~9 instructions a multiply-add on B8, against ~3.6 this way:
ptxas, bench/NOTES.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gasync.codegen.exprs import local
from gasync.codegen.machine import Emitter
from gasync.planner import ir
from gasync.planner.walk import exprs_of, subexprs

JAM = 0  # iterations a lane turn; 0: never jam (B8 measured 18% and 9% slower with 4: bench/NOTES.md)
STRAIGHT = (ir.Let, ir.Store)  # what may stand around and inside the inner loop


def inner_loop(s: ir.For, captured: set[str]) -> ir.For | None:
    """The one sequential loop of parallel loop ``s``'s body, where the body can be jammed:
    straight-line statements (lets, stores) around that loop, only such statements in it, and
    its bounds the same for every iteration (literals and the loop's captured locals)."""
    if JAM < 2:
        return None
    fors = [st for st in s.body if isinstance(st, ir.For)]
    if len(fors) != 1 or fors[0].kind != "seq":
        return None
    inner = fors[0]
    around = [st for st in s.body if st is not inner]
    if not all(isinstance(st, STRAIGHT) for st in (*around, *inner.body)):
        return None
    own = own_names(s, inner)
    if own & captured or {inner.var, inner.stop_var} & _assigned((*around, *inner.body)):
        return None
    if _names(inner.start) & own or _names(inner.stop) & own:
        return None
    return inner if effect_free((*around, *inner.body)) else None


def own_names(s: ir.For, inner: ir.For) -> set[str]:
    """The names each copy of an iteration has for itself: the loop's variable and every
    local the body assigns (the inner loop's variable and bound are shared)."""
    return {s.var} | _assigned((*s.body, *inner.body))


def _assigned(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    return {st.var for st in stmts if isinstance(st, ir.Let)}


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in subexprs(e) if isinstance(x, ir.Var)}


@contextmanager
def _copy(em: Emitter, own: set[str], j: int) -> Iterator[None]:
    """While copy ``j`` of an iteration is rendered: its own names carry ``_j<j>``, and only
    the first copy has the source lines beside it."""
    outer = em.r.var
    em.r.var = lambda n: f"{local(n)}_j{j}" if n in own else outer(n)
    em.notes = j == 0
    try:
        yield
    finally:
        em.r.var, em.notes = outer, True


def jammed_loop(em: Emitter, s: ir.For, inner: ir.For) -> list[str]:
    """The lanes' loop of JAM iterations a turn (the caller's one-iteration loop takes the rest)."""
    at = s.body.index(inner)
    before, after = s.body[:at], s.body[at + 1 :]
    own = own_names(s, inner)
    ind = "        "
    out = [
        f"    while k + {JAM - 1} * LANES < hi:  # {JAM} iterations a turn, their `for {inner.var}` as one"
        f" loop ({JAM} chains in flight: codegen/jam.py)"
    ]
    em.loops.append(("native", 0, 0))
    try:
        for j in range(JAM):
            with _copy(em, own, j):
                out.append(ind + em.assign(s.var, f"k + {j} * LANES"))
                em.structured(before, out, ind)
        em.comment(out, ind, inner.span)
        out.append(ind + em.assign(inner.stop_var, em.r(inner.stop)))
        loop_var = f"k_{inner.loop_id}"
        out.append(ind + f"{loop_var} = int64({em.r(inner.start)})")
        out.append(ind + f"while {loop_var} < int64({local(inner.stop_var)}):")
        out.append(ind + "    " + em.assign(inner.var, loop_var))
        out.append(ind + f"    {loop_var} += 1")
        em.loops.append(("native", 0, 0))
        try:
            for j in range(JAM):
                with _copy(em, own, j):
                    em.structured(inner.body, out, ind + "    ")
        finally:
            em.loops.pop()
        for j in range(JAM):
            with _copy(em, own, j):
                em.structured(after, out, ind)
    finally:
        em.loops.pop()
    out.append(f"        k += {JAM} * LANES")
    return out


def effect_free(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether the statements' expressions make no atomic, channel or signal operation (those
    stay in one iteration a turn, where their order between lanes is the executor's)."""
    kinds = ir.SharedOp | ir.BufAtomic | ir.SignalOp | ir.ChannelClose
    return not any(isinstance(x, kinds) for st in stmts for e in exprs_of(st) for x in subexprs(e))
