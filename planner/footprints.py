"""Which elements a buffer write can touch: a per-dimension range for each index.

The concurrent-write check (:mod:`gasync.planner.races`) asks whether two
writes can hit the same element. An index whose values are provably within
a range gives that dimension an interval; any other index may be anything,
so its dimension is the whole extent. What is proven, per index expression:

- an integer literal or const: exactly that value;
- the task's instance variable: the task's range ``start..stop``;
- the variable of a ``for`` whose bounds have intervals: from the least start
  to the greatest stop (loop variables are read-only, so it stays there);
- ``+``, ``-``, ``*``, unary ``-``, ``min`` and ``max`` of such indices,
  ``/`` and ``%`` by a divisor whose range excludes 0, ``&`` with a side that
  is never negative, and casts between integer types, while every value of
  the result fits its type (so no wrapping can move it); anything else is
  unknown.

Names are function-unique in the IR, so one map from variable to interval
serves a whole body. Intervals are half-open ``(lo, hi)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gasync.dsl.ast import Span
from gasync.planner import ir
from gasync.planner.exprs import LIMITS
from gasync.planner.model import Function
from gasync.planner.walk import stmts_in

Interval = tuple[int, int]


@dataclass(frozen=True)
class Write:
    """One plain store: where it is, and a range per dimension (None: any index)."""

    span: Span
    ranges: tuple[Interval | None, ...]

    def linear(self, shape: tuple[int, ...]) -> Interval:
        """The row-major element range covering every element the write can touch.

        Exact when the covered elements are contiguous (one row, or whole rows);
        otherwise it also covers the elements in between, which is safe."""
        lo = hi = 0
        stride = 1
        for dim, rng in zip(reversed(shape), reversed(self.ranges), strict=True):
            a, b = rng if rng is not None else (0, dim)
            lo += a * stride
            hi += (b - 1) * stride
            stride *= dim
        return lo, hi + 1


def loop_ranges(fn: Function, instance: tuple[tuple[str, int, int], ...] | None) -> dict[str, Interval]:
    """The interval of every variable of ``fn`` that has one: the instance variables (a task's,
    its group's), and ``for`` variables whose bounds have intervals (outer loops come first)."""
    env: dict[str, Interval] = {}
    for var, lo, hi in instance or ():
        env[var] = (lo, hi)
    for s in stmts_in(fn.body):
        if isinstance(s, ir.For):
            start, stop = interval(s.start, env), interval(s.stop, env)
            if start is not None and stop is not None:
                env[s.var] = (start[0], stop[1] - 1)
    return env


def store_write(s: ir.Store, env: dict[str, Interval]) -> Write:
    return Write(s.span, tuple(interval(ix, env) for ix in s.index))


def interval(e: ir.Expr, env: dict[str, Interval]) -> Interval | None:
    """A half-open range holding every value ``e`` can take, or None if unknown."""
    rng = _closed(e, env)
    return (rng[0], rng[1] + 1) if rng is not None else None


def _closed(e: ir.Expr, env: dict[str, Interval]) -> tuple[int, int] | None:
    """Like :func:`interval`, closed ``[lo, hi]``; None also where a value could wrap."""
    rng = _closed_unchecked(e, env)
    if rng is None:
        return None
    lo, hi = LIMITS.get(str(e.ty), (0, -1))  # not an integer type: no range
    return rng if lo <= rng[0] <= rng[1] <= hi else None


def hull(a: Interval | None, b: Interval | None) -> Interval | None:
    """The least range holding both (None: either is unknown)."""
    return (min(a[0], b[0]), max(a[1], b[1])) if a is not None and b is not None else None


def contents_key(buf: str) -> str:
    """The key of ``env`` that holds the range of every value buffer ``buf`` can hold, where one
    is known (planner/bounds.py: a group's local integer buffer); no variable is named so."""
    return f"{buf}[]"


def _closed_unchecked(e: ir.Expr, env: dict[str, Interval]) -> tuple[int, int] | None:
    if isinstance(e, ir.Lit):
        return (e.value, e.value) if type(e.value) is int else None
    if isinstance(e, ir.Var | ir.Load):
        rng = env.get(e.name if isinstance(e, ir.Var) else contents_key(e.buf))
        return (rng[0], rng[1] - 1) if rng is not None else None
    if isinstance(e, ir.Cast):
        return _closed(e.expr, env)
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = _closed(e.operand, env)
        return (-inner[1], -inner[0]) if inner is not None else None
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*", "/", "%", "&"):
        a, b = _closed(e.left, env), _closed(e.right, env)
        if a is None or b is None:
            return None
        return _arith(e.op, a, b)
    if isinstance(e, ir.Call) and e.kind == "builtin" and e.name in ("min", "max") and len(e.args) == 2:
        a, b = _closed(e.args[0], env), _closed(e.args[1], env)
        if a is None or b is None:
            return None
        pick = min if e.name == "min" else max
        return pick(a[0], b[0]), pick(a[1], b[1])
    return None


def _arith(op: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """The closed range of ``a op b`` over two closed ranges (None: unknown), before wrapping."""
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    if op == "*":
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if op == "&":  # with one side never negative, the result lies between 0 and that side
        tops = [r[1] for r in (a, b) if r[0] >= 0]
        return (0, min(tops)) if tops else None
    if b[0] <= 0 <= b[1]:
        return None  # a divisor that may be 0 (which gives 0) or change sign
    if op == "/":  # truncating toward zero: monotone in each operand, so the corners bound it
        corners = [_trunc_div(x, y) for x in a for y in b]
        return min(corners), max(corners)
    most = max(abs(b[0]), abs(b[1])) - 1  # a remainder takes the dividend's sign, |r| < |divisor|
    return (max(a[0], -most) if a[0] < 0 else 0), (min(a[1], most) if a[1] > 0 else 0)


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q
