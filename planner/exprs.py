"""Type checking and resolution of expressions (the expression half of the checker).

Types flow both ways, as in Rust: ``want`` is the type the context expects,
and a literal takes it. A binary operator checks its typed operand first so a
literal on the other side adapts (``2.0 * x`` with ``x: f64`` is f64). An
``.await`` met inside an expression is hoisted: its future becomes an
:class:`~gasync.planner.ir.AwaitS` on ``self.pre`` with a fresh temporary,
and the expression continues with that temporary.
"""

from __future__ import annotations

from collections.abc import Callable

from gasync.dsl import ast
from gasync.dsl.diagnostics import Note
from gasync.planner import ir
from gasync.planner.calls import BUF_ATOMICS, MATH_FNS, CallChecker, is_numeric
from gasync.planner.consteval import FAILED_CONST, check_constant_shift, evaluate
from gasync.planner.errors import (
    ArityError,
    AwaitContextError,
    ConstEvalError,
    DependentError,
    FutureMisuseError,
    IndexBoundsError,
    TypeMismatchError,
    UnknownNameError,
    a_or_an,
)
from gasync.planner.fnstate import CONST_FN, CONST_NOTE, POISONED, FnState
from gasync.planner.literals import COMPARE, FLOAT_MAX, flexible, float_fits, plain
from gasync.planner.symbols import Symbols, define_note

__all__ = ["BUF_ATOMICS", "LIMITS", "MATH_FNS", "POISONED", "ExprChecker", "FnState", "is_numeric"]

ARITH = ("+", "-", "*", "/", "%")
BITWISE = ("&", "|", "^")
LIMITS = {
    "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1),
    "u32": (0, 2**32 - 1),
    "u64": (0, 2**64 - 1),
}


class ExprChecker(CallChecker):
    """Expressions: literals, names, operators, casts and buffer loads; calls in planner/calls.py."""

    syms: Symbols
    fn: FnState
    pre: list[ir.Stmt]
    suspends_of: Callable[[str], bool]
    block_hints: dict[int, ir.Ty]  # id of an async block -> the type its context wants (stmts.BodyChecker sets it)

    # ---- entry points ----
    def expr(self, e: ast.Expr | ast.Reduce, want: ir.Ty | None = None) -> ir.Expr:
        """Check an expression used as a value."""
        out = self._expr(e, want)
        if want is not None and out.ty != want:
            raise _mismatch(want, out.ty, e.span)
        return out

    def _expr(self, e: ast.Expr | ast.Reduce, want: ir.Ty | None) -> ir.Expr:
        if isinstance(e, ast.IntLit):
            return self._int(e.value, want, e.span)
        if isinstance(e, ast.FloatLit):
            if want is not None and want not in ir.FLOATS:
                raise TypeMismatchError(f"mismatched types: expected {want}, found floating-point literal", e.span)
            ty = want or "f32"
            if not float_fits(e.value, str(ty)):
                raise TypeMismatchError(
                    f"float literal does not fit in {ty}: it would round to infinity",
                    e.span,
                    (Note(f"{ty}'s largest finite value is {FLOAT_MAX[str(ty)]:g}"),),
                )
            return ir.Lit(e.value, ty, e.span)
        if isinstance(e, ast.BoolLit):
            return ir.Lit(e.value, "bool", e.span)
        if isinstance(e, ast.Name):
            return self._name(e, want)
        if isinstance(e, ast.Unary):
            return self._unary(e, want)
        if isinstance(e, ast.Binary):
            return self._binary(e, want)
        if isinstance(e, ast.Cast):
            return self._cast(e)
        if isinstance(e, ast.Index):
            return self._load(e)
        if isinstance(e, ast.Call):
            return self._call(e, want)
        if isinstance(e, ast.MethodCall):
            return self._method(e, want)
        if isinstance(e, ast.Reduce):
            return self.reduce_value(e, want)
        if isinstance(e, ast.Await):
            if isinstance(e.future, ast.AsyncBlock) and isinstance(want, str):
                self.block_hints[id(e.future)] = want  # `let v: u32 = async { 7 }.await`: 7 is a u32
            elif isinstance(e.future, ast.AsyncBlock):
                self.block_hints.pop(id(e.future), None)  # (from an earlier check of it, with a want)
            return self._await_value(e)
        if self.fn.name == CONST_FN:
            raise AwaitContextError(
                "an async block is a future, and a constant expression cannot await one", e.span, (Note(CONST_NOTE),)
            )
        raise FutureMisuseError("an async block is a future: '.await' it, or pass it to join or select", e.span)

    def reduce_value(self, e: ast.Reduce, want: ir.Ty | None) -> ir.Expr:
        raise NotImplementedError  # planner/stmts.py's BodyChecker checks reducing loops

    # ---- leaves ----
    def _int(self, value: int, want: ir.Ty | None, span: ast.Span) -> ir.Lit:
        if want is not None and want not in ir.INTS:
            if want in ir.FLOATS:
                raise TypeMismatchError(
                    f"mismatched types: expected {want}, found integer literal",
                    span,
                    (Note(f"write a float literal such as {value}.0"),),
                )
            raise TypeMismatchError(f"mismatched types: expected {want}, found integer literal", span)
        ty = want or "i32"
        lo, hi = LIMITS[str(ty)]
        if not lo <= value <= hi:
            shown = value if value.bit_length() <= 256 else f"of {value.bit_length()} bits"  # (str(): 4300 digits)
            raise TypeMismatchError(f"literal {shown} does not fit in {ty} (range {lo}..={hi})", span)
        return ir.Lit(value, ty, span)

    def _name(self, e: ast.Name, want: ir.Ty | None) -> ir.Expr:
        found = self.fn.lookup(e.id)
        if found is not None:
            name = found[0]
            var = ir.Var(name, self.fn.locals[name], e.span)
            self.fn.retype(var, want)
            return var
        failed_ty = self.syms.declared_type(e.id)
        if failed_ty is not None:  # checked against its declared type; its value is never used
            return ir.Var(FAILED_CONST + e.id, failed_ty, e.span)
        kind = self.syms.kind(e.id)
        if kind == "const":
            c = self.syms.const(e.id)
            return ir.Lit(c.value, c.ty, e.span)
        if kind == "shared":
            return ir.SharedOp(e.id, "load", (), self.syms.shared[e.id].ty, e.span)
        if kind is None:
            raise UnknownNameError(f"cannot find value '{e.id}' in this scope", e.span)
        hint = {"buffer": f"index it, as in {e.id}[i]", "channel": "use .send(v), .recv() or .close()"}
        notes = (Note(hint[kind]),) if kind in hint else ()
        raise TypeMismatchError(f"'{e.id}' is {a_or_an(kind)}, not a value", e.span, notes)

    def _unary(self, e: ast.Unary, want: ir.Ty | None) -> ir.Expr:
        if e.op == "-" and isinstance(e.operand, ast.IntLit):
            return self._int(-e.operand.value, want, e.span)
        if e.op == "-" and isinstance(e.operand, ast.FloatLit):
            return self._expr(ast.FloatLit(-e.operand.value, e.span), want)
        inner = self._expr(e.operand, want)
        ty = inner.ty
        ok = {
            "-": ty in ir.SIGNED or ty in ir.FLOATS,
            "+": is_numeric(ty),
            "!": ty == "bool" or ty in ir.INTS,
            "~": ty in ir.INTS,
        }[e.op]
        if not ok:
            raise TypeMismatchError(f"cannot apply unary operator '{e.op}' to type {ty}", e.span)
        if e.op == "+":
            return inner
        op = "~" if e.op == "!" and ty != "bool" else e.op
        return ir.Unary(op, inner, ty, e.span)

    def _binary(self, e: ast.Binary, want: ir.Ty | None) -> ir.Expr:
        op = e.op
        if op in ("&&", "||"):
            return self._logical(e)
        operand_want = None if op in COMPARE else want
        if op in ("<<", ">>"):
            left = self._expr(e.left, operand_want)
            right = self._expr(e.right, None)
            if left.ty not in ir.INTS or right.ty not in ir.INTS:
                raise TypeMismatchError(f"cannot shift {left.ty} by {right.ty}: shifts need integers", e.span)
            check_constant_shift(op, str(left.ty), right, e.span)  # `x << 64` (decision 33)
            return ir.Binary(op, left, right, left.ty, e.span)
        left, right = self.pair(e.left, e.right, operand_want)
        ty = left.ty
        if left.ty != right.ty:
            self.fn.retype(left, right.ty if isinstance(right.ty, str) else None)
            self.fn.retype(right, left.ty if isinstance(left.ty, str) else None)
            raise TypeMismatchError(
                f"mismatched types: {left.ty} {op} {right.ty}",
                e.span,
                (Note(f"convert one side with 'as', for example '... as {left.ty}'"),),
            )
        if op in ARITH and not is_numeric(ty):
            raise TypeMismatchError(f"cannot apply '{op}' to {ty}", e.span)
        if op in BITWISE and not (ty in ir.INTS or ty == "bool"):
            raise TypeMismatchError(f"cannot apply '{op}' to {ty}: it needs integers or bools", e.span)
        if op in COMPARE:
            if ty == "bool" and op not in ("==", "!="):
                raise TypeMismatchError(f"cannot compare bools with '{op}'", e.span)
            return ir.Binary(op, left, right, "bool", e.span)
        return ir.Binary(op, left, right, ty, e.span)

    def pair(self, a: ast.Expr, b: ast.Expr, want: ir.Ty | None) -> tuple[ir.Expr, ir.Expr]:
        """Check two operands of one type; the literal-only side adapts to the other, and so
        does an awaited async block whose value is typed by literals (decision 59) beside a
        plain operand (no awaits or calls: typing it first moves no effect before the block's)."""
        awaited_block = isinstance(a, ast.Await) and isinstance(a.future, ast.AsyncBlock)
        if awaited_block and plain(b) and not flexible(b, self.fn.flexible):
            right = self._expr(b, want)
            left = self._expr(a, right.ty if right.ty in (*ir.INTS, *ir.FLOATS) else want)
            return left, right
        if flexible(a, self.fn.flexible) and not flexible(b, self.fn.flexible):
            pre_mark = len(self.pre)
            right = self._expr(b, want)
            left = self._expr(a, right.ty if right.ty in (*ir.INTS, *ir.FLOATS) else want)
            # evaluation order is still left to right: a literal has no effects
            assert len(self.pre) >= pre_mark
            return left, right
        left = self._expr(a, want)
        right = self._expr(b, left.ty if isinstance(left.ty, str) and left.ty != "unit" else None)
        return left, right

    def _logical(self, e: ast.Binary) -> ir.Expr:
        left = self.expr(e.left, "bool")
        saved, self.pre = self.pre, []
        right = self.expr(e.right, "bool")
        hoisted, self.pre = self.pre, saved
        if not hoisted:
            return ir.Binary(e.op, left, right, "bool", e.span)
        # An await on the right of && / || runs only when needed: lower to an if.
        t = self.fn.temp("bool")
        self.pre.append(ir.Let(t, "=", left, e.span))
        then = (*hoisted, ir.Let(t, "=", right, e.span))
        test: ir.Expr = ir.Var(t, "bool", e.span)
        if e.op == "||":
            test = ir.Unary("!", test, "bool", e.span)
        self.pre.append(ir.If(test, then, (), e.span))
        return ir.Var(t, "bool", e.span)

    def _cast(self, e: ast.Cast) -> ir.Expr:
        target = self.syms.scalar(e.type)
        inner = self._expr(e.expr, _cast_hint(e.expr, target))
        if not (is_numeric(inner.ty) or inner.ty == "bool") or target == "bool" and inner.ty != "bool":
            raise TypeMismatchError(f"cannot cast {inner.ty} as {target}", e.span)
        if inner.ty == target:
            return inner
        return ir.Cast(inner, target, e.span)

    def _load(self, e: ast.Index) -> ir.Load:
        buf = self.syms.buffer(e.base)
        index, constant = self.indices(e, buf.shape)
        return ir.Load(e.base.id, index, buf.elem, e.span, proven=constant)

    def indices(self, e: ast.Index, shape: tuple[int, ...]) -> tuple[tuple[ir.Expr, ...], bool]:
        """The checked indices of ``e``, and whether they are all constants (and so, E0218
        being checked here, proven in range: planner/bounds.py looks at the others)."""
        if len(e.indices) != len(shape):
            raise ArityError(
                f"buffer '{e.base.id}' has {len(shape)} dimension(s) but is indexed with {len(e.indices)}", e.span
            )
        out = []
        constant = True
        for d, ix in enumerate(e.indices):
            v = self._expr(ix, "i64" if flexible(ix, self.fn.flexible) else None)
            if v.ty not in ir.INTS:
                raise TypeMismatchError(f"a buffer index must be an integer, found {v.ty}", ix.span)
            try:
                constant = _check_constant_index(e.base.id, shape, d, v, ix.span) and constant
            except IndexBoundsError as err:  # (a size or an index that a define gave: say so)
                err.notes = (*err.notes, *self._define_notes(e.base.id, d, ix))
                raise
            out.append(v)
        self.fn.run_time_indices |= not constant
        return tuple(out), constant

    def _define_notes(self, buf: str, d: int, ix: ast.Expr) -> tuple[Note, ...]:
        """Notes on the defines (-D) that index ``ix`` and dimension ``d`` of buffer ``buf`` read."""
        item = self.syms.items.get(buf)
        exprs = [ix]
        if isinstance(item, ast.Buffer | ast.LocalBuffer) and d < len(item.type.dims):
            exprs.append(item.type.dims[d])
        found = dict(pair for x in exprs for pair in self.syms.defines_in(x))
        return tuple(define_note(n, given) for n, given in sorted(found.items()))


def _mismatch(want: ir.Ty, got: ir.Ty, span: ast.Span) -> TypeMismatchError:
    return TypeMismatchError(
        f"mismatched types: expected {want}, found {got}",
        span,
        (Note(f"convert with 'as {want}'"),) if is_numeric(want) and is_numeric(got) else (),
    )


def _check_constant_index(buf: str, shape: tuple[int, ...], d: int, v: ir.Expr, span: ast.Span) -> bool:
    """An index known at compile time must lie inside the buffer (decision 38); False for
    one known only at run time."""
    try:
        value = evaluate(v, checked_shifts=False)
    except (ConstEvalError, DependentError, ZeroDivisionError, OverflowError, ValueError):
        return False  # known only at run time (or an error reported where the value is)
    if not 0 <= int(value) < shape[d]:
        along = f" along dimension {d + 1}" if len(shape) > 1 else ""
        raise IndexBoundsError(
            f"index out of bounds: the length of '{buf}'{along} is {shape[d]} but the index is {int(value)}", span
        )
    return True


def _cast_hint(e: ast.Expr, target: ir.Ty) -> ir.Ty | None:
    """The type a literal takes from the cast it is the operand of: the cast's own where the
    literal fits it, as Rust's cast hint gives it (`3000000000 as i64`, `0.1 as f64` exactly,
    not the f32 nearest to 0.1), else none, so that it keeps its default type and is cast
    from that (`-1 as u32` is 4294967295, where Rust would not compile it)."""
    if isinstance(e, ast.Unary) and e.op in ("~", "!", "+"):
        return _cast_hint(e.operand, target)  # (as Rust's hint reaches through `!`)
    negated = isinstance(e, ast.Unary) and e.op == "-"
    lit = e.operand if isinstance(e, ast.Unary) and negated else e
    if isinstance(lit, ast.IntLit) and target in ir.INTS:
        lo, hi = LIMITS[str(target)]
        return target if lo <= (-lit.value if negated else lit.value) <= hi else None
    if isinstance(lit, ast.FloatLit) and target in ir.FLOATS:
        return target if float_fits(lit.value, str(target)) else None
    return None
