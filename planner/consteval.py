"""Compile-time evaluation of typed IR expressions, with the target's semantics.

Integers wrap to their width and divide truncating toward zero, as on the
device; an f32 expression is folded in f32, as the device computes it (NumPy's
``np.float32`` arithmetic is the reference): every operand, literals and consts
included, and every intermediate result is rounded to f32, so ``0.5 - 0.3`` as
an f32 is ``0.19999998807907104``, not ``0.2`` rounded once at the end. Shifts are the one
place where folding and the device differ on purpose: on the device a shift
amount is masked to the width (``x << 40`` on an i32 is ``x << 8``), while a
constant shift by the width or more, or by a negative amount, is an error, as
Rust rejects it ("attempt to shift left with overflow"). The same check
applies to a shift anywhere, in a task or fn body too, whose amount is known at
compile time (:func:`check_constant_shift`). ``evaluate(e,
checked_shifts=False)`` gives the device's answer instead (the property tests
use it as their reference).
"""

from __future__ import annotations

import math
import struct

from gasync.dsl.ast import Span
from gasync.dsl.diagnostics import Note
from gasync.planner import ir
from gasync.planner.errors import ConstEvalError, DependentError

# the name of a const whose definition failed, as a use of it is typed (Symbols.declared_type)
FAILED_CONST = "$failed-const:"

Value = int | float | bool


def wrap(value: int, ty: str) -> int:
    """Reduce an integer to the range of ``ty`` (two's complement)."""
    bits = ir.BITS[ty]
    value &= (1 << bits) - 1
    if ty in ir.SIGNED and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def to_f32(x: float) -> float:
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def convert(value: Value, ty: str) -> Value:
    """``value as ty``."""
    if ty == "bool":
        return bool(value)
    if ty in ir.INTS:
        if isinstance(value, float):
            if math.isnan(value):
                return 0
            if math.isinf(value):
                value = 2.0**64 if value > 0 else -(2.0**64)
            lo, hi = -(1 << (ir.BITS[ty] - 1)), (1 << (ir.BITS[ty] - 1)) - 1
            if ty.startswith("u"):
                lo, hi = 0, (1 << ir.BITS[ty]) - 1
            return int(min(max(math.trunc(value), lo), hi))  # saturating, as Rust's `as`
        return wrap(int(value), ty)
    f = float(value)
    return to_f32(f) if ty == "f32" else f


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def evaluate(e: ir.Expr, checked_shifts: bool = True) -> Value:
    """Evaluate a constant expression; raise ConstEvalError if it is not one."""
    if isinstance(e, ir.Lit):
        # an f32 literal (or const) is an f32 before any operation uses it: 0.3 is 0.30000001192092896
        return convert(e.value, "f32") if e.ty == "f32" else e.value
    if isinstance(e, ir.Cast):
        return convert(evaluate(e.expr, checked_shifts), str(e.ty))
    if isinstance(e, ir.Unary):
        return _unary(e.op, evaluate(e.operand, checked_shifts), str(e.ty))
    if isinstance(e, ir.Binary):
        left, right = evaluate(e.left, checked_shifts), evaluate(e.right, checked_shifts)
        if checked_shifts and e.op in ("<<", ">>"):
            _check_shift(e, int(right))
        return _binary(e, left, right)
    if isinstance(e, ir.Call) and e.kind == "builtin":
        args = [evaluate(a, checked_shifts) for a in e.args]
        return _builtin(e.name, args, str(e.ty), e.span)
    if isinstance(e, ir.Var) and e.name.startswith(FAILED_CONST):
        raise DependentError(f"'{e.name.removeprefix(FAILED_CONST)}' has no value: its definition has an error", e.span)
    raise ConstEvalError("this value must be known at compile time: use literals and consts only", e.span)


def _check_shift(e: ir.Binary, amount: int) -> None:
    check_shift(e.op, str(e.ty), amount, e.span)


def check_shift(op: str, ty: str, amount: int, span: Span) -> None:
    """A shift of a ``ty`` by a known ``amount`` must shift by less than the width, and not by a
    negative amount (decision 33): Rust's "attempt to shift left with overflow"."""
    bits = ir.BITS[ty]
    if not 0 <= amount < bits:
        raise ConstEvalError(
            f"attempt to shift {'left' if op in ('<<', '<<=') else 'right'} with overflow",
            span,
            (Note(f"{ty} is {bits} bits wide: a constant shift amount must be in 0..{bits}, found {amount}"),),
        )


def check_constant_shift(op: str, ty: str, amount: ir.Expr, span: Span) -> None:
    """Decision 33 in any expression: a shift whose amount is known at compile time (literals
    and consts) is checked here, wherever it is; one known only at run time is masked to the
    width on the device, as decision 6 says."""
    try:
        value = evaluate(amount, checked_shifts=False)
    except (ConstEvalError, DependentError, ZeroDivisionError, OverflowError, ValueError):
        return  # known only at run time (or an error reported where the amount is)
    check_shift(op, ty, int(value), span)


def _unary(op: str, v: Value, ty: str) -> Value:
    if op == "-":
        return convert(-v, ty)
    if op == "!" and ty == "bool":
        return not v
    return wrap(~int(v), ty)


def _binary(e: ir.Binary, a: Value, b: Value) -> Value:
    op, ty = e.op, str(e.ty)
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return bool({"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op])
    if op == "&&":
        return bool(a and b)
    if op == "||":
        return bool(a or b)
    if ty in ir.FLOATS:
        return convert(_float_op(op, float(a), float(b), e.span), ty)
    x, y = int(a), int(b)
    if op in ("/", "%") and y == 0:
        raise ConstEvalError("division by zero in a constant expression", e.span)
    if op in ("<<", ">>"):
        y %= ir.BITS[ty]
    result = {
        "+": lambda: x + y,
        "-": lambda: x - y,
        "*": lambda: x * y,
        "/": lambda: trunc_div(x, y),
        "%": lambda: x - y * trunc_div(x, y),
        "&": lambda: x & y,
        "|": lambda: x | y,
        "^": lambda: x ^ y,
        "<<": lambda: x << y,
        ">>": lambda: x >> y,
    }[op]()
    if ty == "bool":
        return bool(result)
    return wrap(result, ty)


def _float_op(op: str, a: float, b: float, span: Span) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b if b != 0 else (math.copysign(math.inf, a) if a != 0 else math.nan)
    if op == "%":
        return math.fmod(a, b) if b != 0 else math.nan
    raise ConstEvalError(f"operator '{op}' does not apply to floats", span)


def _builtin(name: str, args: list[Value], ty: str, span: Span) -> Value:
    if name == "min":
        return min(args)
    if name == "max":
        return max(args)
    if name == "abs":
        return convert(abs(args[0]), ty)
    fns = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log, "sin": math.sin, "cos": math.cos}
    try:
        if name in fns:
            return convert(fns[name](float(args[0])), ty)
        if name == "floor":
            return convert(float(math.floor(float(args[0]))), ty)
        if name == "ceil":
            return convert(float(math.ceil(float(args[0]))), ty)
        if name == "pow":
            return convert(math.pow(float(args[0]), float(args[1])), ty)
    except (ValueError, OverflowError) as exc:
        raise ConstEvalError(f"cannot evaluate {name}(...) at compile time: {exc}", span) from None
    raise ConstEvalError(f"'{name}' cannot be evaluated at compile time", span)
