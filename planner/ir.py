"""The typed, resolved IR that the planner hands to code generation.

Every expression carries its type; every name is resolved (a local is a
:class:`Var` with a function-unique name, a const is folded into a
:class:`Lit`, globals are named by kind). Bodies are in *await-normal form*:
an ``.await`` appears only as an :class:`AwaitS` statement whose future's
arguments are await-free, so that each await point is one state of the
function's state machine and every temporary is a named local with a frame
slot. Types are strings for scalars (``'i32'``, ``'f64'``, ``'bool'``,
``'unit'``) and :class:`FutureT` / :class:`TupleT` for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.dsl.ast import NOSPAN, Span

INTS = ("i32", "i64", "u32", "u64")
SIGNED = ("i32", "i64")
FLOATS = ("f32", "f64")
SCALARS = ("bool", *INTS, *FLOATS)
BITS = {"bool": 8, "i32": 32, "i64": 64, "u32": 32, "u64": 64, "f32": 32, "f64": 64}


@dataclass(frozen=True)
class FutureT:
    output: Ty

    def __str__(self) -> str:
        return f"future<{self.output}>"


@dataclass(frozen=True)
class TupleT:
    elems: tuple[Ty, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


Ty = str | FutureT | TupleT


def _sp() -> Span:
    return field(default=NOSPAN, compare=False, repr=False)


# ---- expressions (await-free after normalisation) ---------------------------


@dataclass(frozen=True)
class Lit:
    value: int | float | bool
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class Var:
    name: str
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class Load:
    """Read of a buffer element ``buf[i, j]``.

    ``proven``: every index is proven inside the buffer (planner/bounds.py), so the read is
    not checked at run time; the same on :class:`Store` and :class:`BufAtomic`.
    """

    buf: str
    index: tuple[Expr, ...]
    ty: Ty
    span: Span = _sp()
    proven: bool = False


@dataclass(frozen=True)
class SharedOp:
    """Atomic access to a ``shared`` scalar: load, store, fetch_add, fetch_sub, fetch_max,
    fetch_min, fetch_and, fetch_or, cas."""

    name: str
    op: str
    args: tuple[Expr, ...]
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class BufAtomic:
    """``atomic_add(hist[b], 1)`` and friends; the value is the element's old value."""

    op: str  # add, sub, max, min, and, or
    buf: str
    index: tuple[Expr, ...]
    value: Expr
    ty: Ty
    span: Span = _sp()
    proven: bool = False


@dataclass(frozen=True)
class SignalOp:
    """``stop.set()`` or ``stop.is_set()``."""

    name: str
    op: str
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class ChannelClose:
    name: str
    ty: Ty = "unit"
    span: Span = _sp()


@dataclass(frozen=True)
class Unary:
    op: str  # '-', '!', '~' ('!' on ints is bitwise not, as in Rust)
    operand: Expr
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class Binary:
    op: str
    left: Expr
    right: Expr
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class Cast:
    expr: Expr
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class Call:
    """A call that runs now: ``kind`` is 'fn', 'extern' or 'builtin'."""

    kind: str
    name: str
    args: tuple[Expr, ...]
    ty: Ty
    span: Span = _sp()


# ---- futures: only as the operand of AwaitS / join / select -----------------


@dataclass(frozen=True)
class AsyncCall:
    fn: str
    args: tuple[Expr, ...]
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class YieldNow:
    ty: Ty = FutureT("unit")
    span: Span = _sp()


@dataclass(frozen=True)
class Sleep:
    ns: Expr
    ty: Ty = FutureT("unit")
    span: Span = _sp()


@dataclass(frozen=True)
class Send:
    chan: str
    value: Expr
    ty: Ty = FutureT("unit")
    span: Span = _sp()


@dataclass(frozen=True)
class Recv:
    chan: str
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class Wait:
    signal: str
    ty: Ty = FutureT("unit")
    span: Span = _sp()


@dataclass(frozen=True)
class Join:
    futures: tuple[Future, ...]
    ty: Ty
    span: Span = _sp()


@dataclass(frozen=True)
class AsyncBlock:
    """An async block's body; it reads and writes the enclosing frame's locals.

    ``suspends`` is also true for a block with a ``return``, which leaves the block only:
    the code generator inlines the body of a block that never suspends, and a ``return``
    there would leave the enclosing poll, so such a block gets a state machine of its own.
    """

    body: tuple[Stmt, ...]
    result: str | None  # the local that receives the block's value (its tail or a `return`)
    ty: Ty
    suspends: bool
    span: Span = _sp()


Future = AsyncCall | YieldNow | Sleep | Send | Recv | Wait | Join | AsyncBlock
Expr = Lit | Var | Load | SharedOp | BufAtomic | SignalOp | ChannelClose | Unary | Binary | Cast | Call


# ---- statements -------------------------------------------------------------


@dataclass(frozen=True)
class Let:
    """Assign a local (first binding or later assignment): ``var op= value``."""

    var: str
    op: str
    value: Expr
    span: Span = _sp()


@dataclass(frozen=True)
class Store:
    buf: str
    index: tuple[Expr, ...]
    op: str
    value: Expr
    span: Span = _sp()
    proven: bool = False


@dataclass(frozen=True)
class Eval:
    """An expression evaluated for its effect."""

    expr: Expr
    span: Span = _sp()


@dataclass(frozen=True)
class AwaitS:
    """``targets = future.await`` -- one await point, one state.

    ``targets`` is empty when the value is dropped, one name for a value, and
    one name (or None for ``_``) per element for a joined tuple.
    ``site`` numbers the function's await points from 1 in source order.
    """

    targets: tuple[str | None, ...]
    future: Future
    site: int
    suspends: bool
    span: Span = _sp()


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    span: Span = _sp()


@dataclass(frozen=True)
class Loop:
    """``loop { body }``; while loops are lowered to a loop with a break."""

    body: tuple[Stmt, ...]
    span: Span = _sp()


@dataclass(frozen=True)
class While:
    cond: Expr
    body: tuple[Stmt, ...]
    span: Span = _sp()


@dataclass(frozen=True)
class For:
    """``for var in start..stop``; ``kind`` 'seq', 'parallel' or 'bulk'.

    ``stop_var`` holds the bound, evaluated once before the loop as in Rust.
    """

    kind: str
    var: str
    start: Expr
    stop_var: str
    stop: Expr
    body: tuple[Stmt, ...]
    loop_id: int
    span: Span = _sp()
    reduce: Reduction | None = None  # a reducing parallel or bulk for (planner/reduces.py)


@dataclass(frozen=True)
class Reduction:
    """What a reducing loop computes: ``op`` (sum, min, max, and, or) over the value that
    each iteration's last statement leaves in its body local ``value``, into ``into``, a
    local of the enclosing function set once the loop has finished (the operator's
    identity for an empty range)."""

    op: str
    value: str
    into: str
    ty: Ty
    span: Span = _sp()  # the operator's


@dataclass(frozen=True)
class ForAwait:
    var: str
    chan: str
    body: tuple[Stmt, ...]
    site: int
    span: Span = _sp()


@dataclass(frozen=True)
class Break:
    span: Span = _sp()


@dataclass(frozen=True)
class Continue:
    span: Span = _sp()


@dataclass(frozen=True)
class Return:
    value: Expr | None
    span: Span = _sp()


@dataclass(frozen=True)
class SelectArm:
    target: str | None
    future: Future
    body: tuple[Stmt, ...]
    span: Span = _sp()


@dataclass(frozen=True)
class Select:
    arms: tuple[SelectArm, ...]
    site: int
    span: Span = _sp()


Stmt = Let | Store | Eval | AwaitS | If | Loop | While | For | ForAwait | Break | Continue | Return | Select
