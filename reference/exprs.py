"""Evaluating await-free IR expressions: a table of small evaluators, one per node kind.

Expressions are evaluated left to right; ``&&`` and ``||`` short-circuit.
A plain ``fn`` call runs the callee's body to completion on the spot; an
``extern fn`` calls the Python function under its ``@cuda.jit(device=True)``
decorator with NumPy scalars, as the simulated kernel does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gasync.planner import ir
from gasync.reference.values import Value, binary, builtin, cast, combine, from_element, scalar, unary
from gasync.reference.world import World
from gasync.runtime.buffers import DTYPES
from gasync.runtime.errors import bounds_error


class Frame(dict[str, Value]):
    """One activation's locals by name, and their types (the function's ``locals``)."""

    def __init__(self, types: dict[str, ir.Ty]):
        super().__init__()
        self.types = types


class ExprEval:
    """The expression half of the interpreter (mixed into :class:`~gasync.reference.machine.Machine`)."""

    world: World
    externs: dict[str, Callable[..., Any]]

    def call_fn(self, name: str, args: list[Value]) -> Value:
        raise NotImplementedError  # provided by the statement half: runs a plain fn's body

    def expr(self, e: ir.Expr, frame: Frame) -> Value:
        return EVALUATORS[type(e)](self, e, frame)

    def index(self, index: tuple[ir.Expr, ...], frame: Frame, buf: str) -> tuple[int, ...]:
        """Evaluated indices; one out of range stops the run (decision 40), its instance named
        by the scheduler."""
        ix = tuple(int(self.expr(i, frame)) for i in index)
        shape = self.world.buffers[buf].shape
        for d, (k, n) in enumerate(zip(ix, shape, strict=True)):
            if not 0 <= k < n:
                raise bounds_error(buf, tuple(shape), d, k, index[d].span, "")
        return ix

    def _lit(self, e: ir.Lit, frame: Frame) -> Value:
        return scalar(e.value, str(e.ty))

    def _var(self, e: ir.Var, frame: Frame) -> Value:
        return frame[e.name]

    def _load(self, e: ir.Load, frame: Frame) -> Value:
        ix = self.index(e.index, frame, e.buf)
        return from_element(self.world.buffers[e.buf][ix], str(e.ty))

    def _shared(self, e: ir.SharedOp, frame: Frame) -> Value:
        w = self.world
        args = [self.expr(a, frame) for a in e.args]
        old = w.shared[e.name]
        if e.op == "load":
            return old
        if e.op == "store":
            w.shared[e.name] = args[0]
            return None
        if e.op == "cas":
            if old == args[0]:
                w.shared[e.name] = args[1]
            return old
        w.shared[e.name] = combine(e.op.removeprefix("fetch_"), old, args[0], w.shared_types[e.name])
        return old

    def _buf_atomic(self, e: ir.BufAtomic, frame: Frame) -> Value:
        ix = self.index(e.index, frame, e.buf)
        value = self.expr(e.value, frame)
        arr = self.world.buffers[e.buf]
        old = from_element(arr[ix], str(e.ty))
        arr[ix] = combine(e.op, old, value, str(e.ty))
        return old

    def _signal(self, e: ir.SignalOp, frame: Frame) -> Value:
        if e.op == "is_set":
            return self.world.signals[e.name]
        self.world.set_signal(e.name)
        return None

    def _close(self, e: ir.ChannelClose, frame: Frame) -> Value:
        self.world.close(e.name)
        return None

    def _unary(self, e: ir.Unary, frame: Frame) -> Value:
        return unary(e.op, self.expr(e.operand, frame), str(e.ty))

    def _binary(self, e: ir.Binary, frame: Frame) -> Value:
        left = self.expr(e.left, frame)
        if e.op == "&&":
            return bool(left) and bool(self.expr(e.right, frame))
        if e.op == "||":
            return bool(left) or bool(self.expr(e.right, frame))
        ty = str(e.left.ty) if e.op in ("<<", ">>") else str(e.ty)
        return binary(e.op, left, self.expr(e.right, frame), ty)

    def _cast(self, e: ir.Cast, frame: Frame) -> Value:
        return cast(self.expr(e.expr, frame), str(e.expr.ty), str(e.ty))

    def _call(self, e: ir.Call, frame: Frame) -> Value:
        args = [self.expr(a, frame) for a in e.args]
        if e.kind == "builtin":
            return builtin(e.name, args, str(e.ty))
        if e.kind == "fn":
            return self.call_fn(e.name, args)
        result = self.externs[e.name](*(_numpy(a, str(x.ty)) for a, x in zip(args, e.args, strict=True)))
        return None if e.ty == "unit" else scalar(result, str(e.ty))


def _numpy(v: Value, ty: str) -> Any:
    """A value as the NumPy scalar the generated code would pass."""
    return DTYPES[ty](v)


EVALUATORS: dict[type, Callable[[ExprEval, Any, Frame], Value]] = {
    ir.Lit: ExprEval._lit,
    ir.Var: ExprEval._var,
    ir.Load: ExprEval._load,
    ir.SharedOp: ExprEval._shared,
    ir.BufAtomic: ExprEval._buf_atomic,
    ir.SignalOp: ExprEval._signal,
    ir.ChannelClose: ExprEval._close,
    ir.Unary: ExprEval._unary,
    ir.Binary: ExprEval._binary,
    ir.Cast: ExprEval._cast,
    ir.Call: ExprEval._call,
}
