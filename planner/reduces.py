"""Reductions: ``parallel for i in a..b reduce OP { ...; value }`` and its ``bulk for`` twin.

A reducing loop is a value (of a ``let`` or an assignment). The planner checks its
body as any loop body (no await, task locals read-only) with one more rule: the
body ends in a tail expression, the iteration's value, which a last statement
stores in a body local; the loop then combines those values with ``OP`` into a
local of the enclosing function, and the ``let`` or assignment reads that local.
So the checks of assignments (compound operators, buffer targets) apply as they are.
"""

from __future__ import annotations

from gasync.dsl import ast
from gasync.dsl.diagnostics import Note
from gasync.planner import ir
from gasync.planner.asyncblocks import AsyncBlockChecker
from gasync.planner.errors import ReductionError, TypeMismatchError
from gasync.planner.literals import flexible

OPS = ("sum", "min", "max", "and", "or")
NUMERIC_OPS = ("sum", "min", "max")


def check_op(op: str, ty: ir.Ty, span: ast.Span) -> None:
    """``op`` must be one of OPS and take values of ``ty``."""
    if op not in OPS:
        raise ReductionError(f"unknown reduction '{op}': expected 'sum', 'min', 'max', 'and' or 'or'", span)
    numeric = ty in ir.INTS or ty in ir.FLOATS
    if op in NUMERIC_OPS and not numeric:
        raise ReductionError(f"'reduce {op}' needs a numeric value, found {ty}", span)
    if op not in NUMERIC_OPS and not (ty in ir.INTS or ty == "bool"):
        raise ReductionError(f"'reduce {op}' needs bool or an integer type, found {ty}", span)


def identity(op: str, ty: ir.Ty) -> bool | int | float:
    """The value of a reduction over an empty range."""
    if ty == "bool":
        return op == "and"
    if ty in ir.FLOATS:
        return {"sum": 0.0, "min": float("inf"), "max": float("-inf")}[op]
    bits = ir.BITS[str(ty)]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if str(ty).startswith("i") else (0, (1 << bits) - 1)
    return {"sum": 0, "min": hi, "max": lo, "and": -1 if lo < 0 else hi, "or": 0}[op]


def combine(op: str, ty: ir.Ty, a: bool | int | float, b: bool | int | float) -> bool | int | float:
    """``a OP b`` as the loop combines two values (integers wrap as the type does)."""
    if ty == "bool":
        return (a and b) if op == "and" else (a or b)  # check_op allows only these on bool
    if ty in ir.FLOATS and op in ("min", "max") and (a != a or b != b):
        return b if a != a else a  # a NaN is no candidate, as in Rust's f64::min and CUDA's fmin
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if ty in ir.FLOATS:
        return a + b
    bits = ir.BITS[str(ty)]
    if op == "sum":
        v = (int(a) + int(b)) & ((1 << bits) - 1)
    elif op == "and":
        v = (int(a) & int(b)) & ((1 << bits) - 1)
    else:
        v = (int(a) | int(b)) & ((1 << bits) - 1)
    return v - (1 << bits) if str(ty).startswith("i") and v >= 1 << (bits - 1) else v


class ReducingLoops(AsyncBlockChecker):
    """A reducing loop as a value, and its body's tail (planner/stmts.py's BodyChecker checks
    the loop itself, ``_s_For``)."""

    def _s_For(self, s: ast.For, reduce: tuple[str, ast.Span, ir.Ty | None] | None = None) -> list[ir.Stmt]:
        raise NotImplementedError  # planner/stmts.py

    def reduce_value(self, e: ast.Reduce, want: ir.Ty | None) -> ir.Expr:
        """A reducing loop as a value: the loop goes before the statement that reads it
        (with the awaits hoisted so far, in self.pre), its value is the local it fills."""
        pre, self.pre = self.pre, []
        try:
            loop = self._s_For(e.loop, (e.op, e.op_span, want))
        finally:
            self.pre = pre
        found = loop[-1]
        assert isinstance(found, ir.For) and found.reduce is not None
        self.pre.extend(loop)
        return ir.Var(found.reduce.into, found.reduce.ty, e.span)

    def _reducing_body(
        self, b: ast.Block, reduce: tuple[str, ast.Span, ir.Ty | None]
    ) -> tuple[tuple[ir.Stmt, ...], ir.Var]:
        """A reducing loop's body: its statements, then its tail (the iteration's value) into
        a body local, in one scope so the tail sees the statements' names."""
        op, op_span, want = reduce
        if b.tail is None:
            note = "end the body with an expression and no ';', as in '{ let d = x[i] - y[i]; d * d }'"
            if b.stmts and isinstance(b.stmts[-1], ast.If):  # `{ if c { 1 } else { 0 } }`, as in Rust
                note = (
                    "'if' is a statement, not a value: give the value a 'let' and assign it in the"
                    " branches, as in '{ let h: i64 = 0; if x[i] > 0.5 { h = 1; } h }'"
                )
            raise ReductionError("a reducing loop's body must end in the iteration's value", b.span, (Note(note),))
        literal = flexible(b.tail, self.fn.flexible)
        binding = (b.tail.span.line, b.tail.span.column, "reduce")  # `{ 1 }`: a later use may type it
        if literal and want is None:
            want = self.fn.hints.get(binding)
        self.fn.scopes.append({})
        try:
            out = [x for st in b.stmts for x in self.stmt(st)]
            tail = self.expr(b.tail, want)
            if want is not None and tail.ty != want:
                self.fn.retype(tail, want)  # `{ i }` over a literal range: the loop's type is the value's
            check_op(op, tail.ty, op_span)
            if want is not None and tail.ty != want:
                raise TypeMismatchError(f"mismatched types: expected {want}, found {tail.ty}", b.tail.span)
            value = ir.Var(self.fn.temp(tail.ty), tail.ty, b.tail.span)
            if (source := self.fn.source(tail)) is not None:
                self.fn.defaulted[value.name] = source
            elif literal and binding not in self.fn.hints:
                self.fn.defaulted[value.name] = binding
            out += self._flush([ir.Let(value.name, "=", tail, b.tail.span)])
        finally:
            self.fn.scopes.pop()
        return tuple(out), value
