"""Unroll-and-jam: a parallel loop whose iterations each run one sequential inner loop.

``parallel for e in 0..T * T { let sum = acc[e]; for kk in 0..T { sum = sum + ta[..] * tb[..]; }
acc[e] = sum; }`` (samples/tiled_matmul.gasync) gives each lane one chain of dependent
multiply-adds an iteration: the lane waits out each one's latency, and with a few warps an SM
(a group's compute warps) nothing hides it. Here a lane takes JAM iterations a turn (``e``,
``e + 32``, ...), runs their statements before the inner loop one iteration after the other,
then one inner loop whose body is each iteration's body in turn, then their statements after
it: JAM independent chains in flight. A local the copies compute alike is computed once and
shared (``same_in_copies``): copy ``j``'s ``e`` is ``e + 32 j``, so ``q = e % T`` is the same
in every copy where ``T`` divides 32 (``e`` not negative, the division Rust's); the loads of
``tb[s, kk * T + q]`` are then one address, which LLVM reads once for all JAM copies, and each
``tb`` element read from shared memory feeds JAM multiply-adds (a register tile: LLVM cannot
see ``(e + 32) % T == e % T`` itself). A parallel loop's iterations may run in any order and at once
(the lanes already run 32 of them together), so interleaving them is the program's meaning;
each iteration's own statements keep their order, and its sums their order (no reassociation).

The copies' locals are the iteration's own names under ``j<copy>_`` (``j1_v_acc``:
codegen/names.py); the inner loop's variable and bound, the same for every copy, are
shared. The jammed inner loop is a ``while`` over a counter, not Numba's ``range``: LLVM
unrolls a body this large only in part, and Numba's range loop then keeps its trip-count
test in each unrolled turn and its indices without constant offsets (~9 instructions a
multiply-add on B8, against ~3.6 this way: ptxas, bench/NOTES.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager

from gasync.codegen.exprs import local
from gasync.codegen.machine import Emitter
from gasync.codegen.names import jam_copy
from gasync.codegen.occupancy import LANES
from gasync.planner import ir
from gasync.planner.walk import exprs_of, subexprs

JAM = 4  # iterations a lane turn; 0: never jam (bench/NOTES.md, runs 24 and 28)
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


def same_in_copies(s: ir.For, inner: ir.For) -> set[str]:
    """The locals of ``s``'s iteration, bound once before the inner loop, whose value is the
    same in every copy (copy ``j``'s loop variable is copy 0's plus ``j * LANES``).

    Each integer value before the inner loop gets its step, what it moves by from one copy to
    the next (``None``: unknown): the loop variable's is LANES; a literal's or a captured
    local's 0; ``x + y``, ``x - y`` and ``x * literal`` step by the same sums and products;
    ``x / d`` and ``x % d`` for a literal ``d > 0`` that divides x's step, x not negative
    (truncating division is then floor division), by ``step / d`` and 0. A local whose step is 0
    is the same in all copies. Not negative: literals from 0, the loop variable where its range
    starts at a literal from 0, and sums, products, quotients and remainders of such values."""
    at = s.body.index(inner)
    before, rest = s.body[:at], (*s.body[at + 1 :], *inner.body)
    own = own_names(s, inner)
    counts: dict[str, int] = {}
    for st in (*before, *rest):
        if isinstance(st, ir.Let):
            counts[st.var] = counts.get(st.var, 0) + (2 if st in rest else 1)
    starts_nonneg = isinstance(s.start, ir.Lit) and int(s.start.value) >= 0
    step: dict[str, int | None] = {s.var: LANES}
    nonneg: set[str] = {s.var} if starts_nonneg else set()

    def walk(e: ir.Expr) -> tuple[int | None, bool]:
        if isinstance(e, ir.Lit):
            ok = e.ty in ir.INTS and not isinstance(e.value, bool)
            return (0, ok and int(e.value) >= 0) if ok else (None, False)
        if isinstance(e, ir.Var):
            if e.name not in own:
                return 0, False
            return step.get(e.name), e.name in nonneg
        if isinstance(e, ir.Binary) and e.ty in ir.INTS:
            (a, an), (b, bn) = walk(e.left), walk(e.right)
            if a is None or b is None:
                return None, False
            if e.op in ("+", "-"):
                return (a + b if e.op == "+" else a - b), e.op == "+" and an and bn
            if e.op == "*" and isinstance(e.right, ir.Lit):
                return a * int(e.right.value), an and bn
            if e.op in ("/", "%") and isinstance(e.right, ir.Lit) and int(e.right.value) > 0:
                d = int(e.right.value)
                if a == 0:
                    return 0, an
                if an and a % d == 0:
                    return (a // d if e.op == "/" else 0), True
        return None, False

    for st in before:
        if isinstance(st, ir.Let) and st.var in own:
            known, pos = walk(st.value) if counts.get(st.var) == 1 and st.op == "=" else (None, False)
            step[st.var] = known
            if pos:
                nonneg.add(st.var)
    return {n for n, k in step.items() if k == 0 and n != s.var}


@contextmanager
def _copy(em: Emitter, own: set[str], j: int, shared: AbstractSet[str] = frozenset()) -> Iterator[None]:
    """While copy ``j`` of an iteration is rendered: its own names are ``j<j>_`` and the local's
    (``j1_v_acc``: codegen/names.py; those the copies share, copy 0's), and only the first copy
    has the source lines beside it."""
    outer = em.r.var
    em.r.var = lambda n: jam_copy(local(n), 0 if n in shared else j) if n in own else outer(n)
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
    shared = same_in_copies(s, inner)
    ind = "        "
    out = [
        f"    while k + {JAM - 1} * LANES < hi:  # {JAM} iterations a turn, their `for {inner.var}` as one"
        f" loop ({JAM} chains in flight: codegen/jam.py)"
    ]
    em.loops.append(("native", 0, 0))
    try:
        for j in range(JAM):
            with _copy(em, own, j, shared):
                out.append(ind + em.assign(s.var, f"k + {j} * LANES"))
                mine = before if j == 0 else tuple(st for st in before if not _bound(st, shared))
                em.structured(mine, out, ind)
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
                with _copy(em, own, j, shared):
                    em.structured(inner.body, out, ind + "    ")
        finally:
            em.loops.pop()
        for j in range(JAM):
            with _copy(em, own, j, shared):
                em.structured(after, out, ind)
    finally:
        em.loops.pop()
    out.append(f"        k += {JAM} * LANES")
    return out


def _bound(st: ir.Stmt, names: set[str]) -> bool:
    return isinstance(st, ir.Let) and st.var in names


def effect_free(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether the statements' expressions make no atomic, channel or signal operation (those
    stay in one iteration a turn, where their order between lanes is the executor's)."""
    kinds = ir.SharedOp | ir.BufAtomic | ir.SignalOp | ir.ChannelClose
    return not any(isinstance(x, kinds) for st in stmts for e in exprs_of(st) for x in subexprs(e))
