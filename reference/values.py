"""The language's scalar semantics on Python values, one function per operation.

A value is a Python ``bool`` for ``bool``, a Python ``int`` (always inside its
type's range) for the integer types, and a NumPy scalar (``np.float32`` or
``np.float64``) for the float types, so that float arithmetic is rounded to
its type's width exactly as IEEE hardware does it. Integers follow the
Decisions: wrapping (6), truncating ``/`` and ``%`` (7), 0 for a zero divisor
(15), shifts by the amount masked to the width; float-to-int casts saturate
(14). The integer and saturating rules are the planner's constant evaluator's
(``planner/consteval.py``); integer-to-float casts go through NumPy, which
rounds once (a detour through a Python float would round twice).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gasync.planner import ir
from gasync.planner.consteval import convert, trunc_div, wrap
from gasync.runtime.buffers import DTYPES
from gasync.runtime.simmath import ieee

Value = Any  # bool | int | np.float32 | np.float64 (NumPy scalars are untyped for mypy)

FLOAT_TYPES: dict[str, type[np.floating[Any]]] = {"f32": np.float32, "f64": np.float64}
COMPARE: dict[str, Callable[[Value, Value], bool]] = {
    "==": lambda a, b: bool(a == b),
    "!=": lambda a, b: bool(a != b),
    "<": lambda a, b: bool(a < b),
    ">": lambda a, b: bool(a > b),
    "<=": lambda a, b: bool(a <= b),
    ">=": lambda a, b: bool(a >= b),
}
INT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: trunc_div(a, b) if b else 0,
    "%": lambda a, b: a - b * trunc_div(a, b) if b else 0,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}
FLOAT_OPS: dict[str, Callable[[Value, Value], Value]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,  # IEEE: inf or NaN for a zero divisor (decision 15)
    "%": lambda a, b: np.fmod(a, b),
}
BOOL_OPS: dict[str, Callable[[bool, bool], bool]] = {
    "&": lambda a, b: a and b,
    "|": lambda a, b: a or b,
    "^": lambda a, b: a != b,
}


def scalar(value: int | float | bool, ty: str) -> Value:
    """A Plan literal, or any Python number already of type ``ty``, as a value."""
    if ty == "bool":
        return bool(value)
    if ty in FLOAT_TYPES:
        return FLOAT_TYPES[ty](value)
    return int(value)


def from_element(x: Any, ty: str) -> Value:
    """A buffer element (a NumPy scalar) as a value."""
    if ty == "bool":
        return bool(x)
    if ty in FLOAT_TYPES:
        return FLOAT_TYPES[ty](x)
    return int(x)


def host(value: Value) -> int | float | bool:
    """A value as the runtime's Result gives a shared scalar: a Python int, float or bool."""
    return value.item() if isinstance(value, np.generic) else value


def cast(v: Value, src: str, ty: str) -> Value:
    """``v as ty`` for ``v`` of type ``src``."""
    if ty == src or ty == "bool":
        return v
    if ty in ir.INTS:
        if src in FLOAT_TYPES:
            return convert(float(v), ty)  # saturating, NaN -> 0
        return wrap(int(v), ty)
    if src in FLOAT_TYPES or src == "bool":
        return FLOAT_TYPES[ty](v)
    return FLOAT_TYPES[ty](np.array(v, DTYPES[src]))  # one rounding, as the hardware's convert


def unary(op: str, v: Value, ty: str) -> Value:
    if op == "!":
        return not v
    if ty in FLOAT_TYPES:
        return -v
    return wrap(-v if op == "-" else ~v, ty)


def binary(op: str, a: Value, b: Value, ty: str) -> Value:
    """``a op b`` where the result has type ``ty`` (comparisons: bool, shifts: the left's type)."""
    if op in COMPARE:
        return COMPARE[op](a, b)
    if ty == "bool":
        return BOOL_OPS[op](a, b)
    if ty in FLOAT_TYPES:
        return FLOAT_OPS[op](a, b)
    if op in ("<<", ">>"):
        amount = b & (ir.BITS[ty] - 1)
        return wrap(a << amount if op == "<<" else a >> amount, ty)
    return wrap(INT_OPS[op](a, b), ty)


def builtin(name: str, args: list[Value], ty: str) -> Value:
    """``min max abs sqrt exp log sin cos pow floor ceil`` with the result type ``ty``."""
    if name in ("min", "max") and ty in FLOAT_TYPES and (args[0] != args[0] or args[1] != args[1]):
        return args[1] if args[0] != args[0] else args[0]  # a NaN is no candidate (Rust's f64::min)
    if name == "min":
        return min(args[0], args[1])  # Python's min, as the generated code calls it
    if name == "max":
        return max(args[0], args[1])
    if name == "abs":
        return abs(args[0]) if ty in FLOAT_TYPES else wrap(abs(args[0]), ty)
    return FLOAT_TYPES[ty](ieee(name, *(float(a) for a in args)))


def combine(op: str, old: Value, v: Value, ty: str) -> Value:
    """The new value of an atomic read-modify-write ``op`` (add, sub, max, min, and, or)."""
    if op == "max":
        return max(old, v)
    if op == "min":
        return min(old, v)
    return binary({"add": "+", "sub": "-", "and": "&", "or": "|"}[op], old, v, ty)
