"""Type checking of calls (the call half of the expression checker, mixed into
:class:`~gasync.planner.exprs.ExprChecker`): fns and externs, the math builtins, atomics
on buffer elements, and the methods of shared scalars, signals and channels."""

from __future__ import annotations

from gasync.dsl import ast
from gasync.dsl.diagnostics import Note
from gasync.planner import ir
from gasync.planner.errors import (
    ArityError,
    AwaitContextError,
    FutureMisuseError,
    TypeMismatchError,
    UnknownNameError,
    a_or_an,
    plural,
)
from gasync.planner.fnstate import CONST_FN, CONST_NOTE
from gasync.planner.futures import FutureChecker

FLOAT_FNS = ("sqrt", "exp", "log", "sin", "cos", "floor", "ceil")
MATH_FNS = ("min", "max", "abs", "pow", *FLOAT_FNS)
BUF_ATOMICS = {
    "atomic_add": "add",
    "atomic_sub": "sub",
    "atomic_max": "max",
    "atomic_min": "min",
    "atomic_and": "and",
    "atomic_or": "or",
}
BITWISE_ATOMICS = ("and", "or")  # integers only, as `&` and `|`
SHARED_METHODS = (
    "load(), store(v), fetch_add(v), fetch_sub(v), fetch_max(v), fetch_min(v), fetch_and(v), fetch_or(v)"
    " and cas(old, new)"
)


def _given(n: int) -> str:
    return "1 was given" if n == 1 else f"{n} were given"


def is_numeric(ty: ir.Ty) -> bool:
    return ty in ir.INTS or ty in ir.FLOATS


class CallChecker(FutureChecker):
    """Calls; the rest of the expression checker (ExprChecker) provides expr, pair and indices."""

    def expr(self, e: ast.Expr | ast.Reduce, want: ir.Ty | None = None) -> ir.Expr:
        raise NotImplementedError

    def pair(self, a: ast.Expr, b: ast.Expr, want: ir.Ty | None) -> tuple[ir.Expr, ir.Expr]:
        raise NotImplementedError

    def indices(self, e: ast.Index, shape: tuple[int, ...]) -> tuple[tuple[ir.Expr, ...], bool]:
        raise NotImplementedError

    def _call(self, e: ast.Call, want: ir.Ty | None) -> ir.Expr:
        name = e.func
        kind = self.syms.kind(name)
        if kind in ("fn", "extern"):
            params, ret = self.syms.signature(name)
            args = self.args(e, params)
            return ir.Call(kind, name, args, ret, e.span)
        if (kind == "async fn" or name in ("join", "yield_now", "sleep")) and self.fn.name == CONST_FN:
            raise AwaitContextError(
                f"'{name}(...)' is a future, and a constant expression cannot await one",
                e.span,
                (Note(CONST_NOTE),),
            )
        if kind == "async fn" or name in ("join", "yield_now", "sleep"):
            raise FutureMisuseError(
                f"'{name}(...)' is a future, which does nothing unless awaited",
                e.span,
                (Note("add '.await', or pass it to join or select"),),
            )
        if kind is not None:
            raise TypeMismatchError(f"'{name}' is {a_or_an(kind)}, not a function", e.span)
        if name in BUF_ATOMICS:
            return self._buf_atomic(e)
        if name in MATH_FNS:
            return self._math(e, want)
        raise UnknownNameError(f"cannot find function '{name}' in this scope", e.span)

    def args(self, e: ast.Call | ast.MethodCall, params: tuple[str, ...]) -> tuple[ir.Expr, ...]:
        name = e.func if isinstance(e, ast.Call) else e.method
        if len(e.args) != len(params):
            raise ArityError(f"'{name}' takes {plural(len(params), 'argument')} but {_given(len(e.args))}", e.span)
        return tuple(self.expr(a, p) for a, p in zip(e.args, params, strict=True))

    def _math(self, e: ast.Call, want: ir.Ty | None) -> ir.Expr:
        n = 2 if e.func in ("min", "max", "pow") else 1
        if len(e.args) != n:
            raise ArityError(f"'{e.func}' takes {plural(n, 'argument')} but {_given(len(e.args))}", e.span)
        if n == 2:
            a, b = self.pair(e.args[0], e.args[1], want)
            if a.ty != b.ty:
                raise TypeMismatchError(f"mismatched types in {e.func}: {a.ty} and {b.ty}", e.span)
            args: tuple[ir.Expr, ...] = (a, b)
        else:
            args = (self._expr(e.args[0], want if want in ir.FLOATS or e.func == "abs" else None),)
        ty = args[0].ty
        floats_only = e.func in FLOAT_FNS or e.func == "pow"
        if floats_only and ty not in ir.FLOATS:
            raise TypeMismatchError(f"'{e.func}' needs f32 or f64, found {ty}", e.span)
        if not is_numeric(ty) or e.func == "abs" and ty in ("u32", "u64"):
            raise TypeMismatchError(f"'{e.func}' does not apply to {ty}", e.span)
        return ir.Call("builtin", e.func, args, ty, e.span)

    def _buf_atomic(self, e: ast.Call) -> ir.Expr:
        if len(e.args) != 2 or not isinstance(e.args[0], ast.Index):
            raise ArityError(f"'{e.func}' is called as {e.func}(buffer[index], value)", e.span)
        target = e.args[0]
        buf = self.syms.buffer(target.base)
        if buf.elem == "bool":
            raise TypeMismatchError(f"'{e.func}' does not apply to a bool buffer", e.span)
        if BUF_ATOMICS[e.func] in BITWISE_ATOMICS and buf.elem in ir.FLOATS:
            raise TypeMismatchError(f"'{e.func}' does not apply to {buf.elem}: it works on integers", e.span)
        index, constant = self.indices(target, buf.shape)
        value = self.expr(e.args[1], buf.elem)
        return ir.BufAtomic(BUF_ATOMICS[e.func], target.base.id, index, value, buf.elem, e.span, proven=constant)

    def _method(self, e: ast.MethodCall, want: ir.Ty | None) -> ir.Expr:
        fut = self.method_future(e)
        if fut is not None:
            raise FutureMisuseError(
                f"'{e.receiver.id}.{e.method}()' is a future, which does nothing unless awaited",
                e.span,
                (Note("add '.await', or use it in a select"),),
            )
        kind = self.syms.kind(e.receiver.id)
        name = e.receiver.id
        if kind == "shared":
            ty = self.syms.shared[name].ty
            fetches = ("fetch_add", "fetch_sub", "fetch_max", "fetch_min", "fetch_and", "fetch_or")
            arity = {"load": 0, "store": 1, **dict.fromkeys(fetches, 1), "cas": 2}
            if e.method not in arity:
                raise self._no_method(e, f"shared {ty} '{name}'", SHARED_METHODS)
            if e.method.startswith("fetch_") and ty == "bool":
                raise TypeMismatchError(f"'{e.method}' does not apply to bool", e.span)
            if e.method.removeprefix("fetch_") in BITWISE_ATOMICS and ty in ir.FLOATS:
                raise TypeMismatchError(f"'{e.method}' does not apply to {ty}: it works on integers", e.span)
            if e.method == "cas" and ty in ir.FLOATS:
                raise TypeMismatchError(
                    f"'cas' does not apply to {ty}: compare-and-swap works on integers and bools", e.span
                )
            args = self.args(e, (ty,) * arity[e.method])
            return ir.SharedOp(name, e.method, args, "unit" if e.method == "store" else ty, e.span)
        if kind == "signal":
            if e.method not in ("set", "is_set"):
                raise self._no_method(e, f"signal '{name}'", "set(), is_set() and wait()")
            self.args(e, ())
            return ir.SignalOp(name, e.method, "unit" if e.method == "set" else "bool", e.span)
        if kind == "channel":
            if e.method != "close":
                raise self._no_method(e, f"channel '{name}'", "send(v), recv() and close()")
            self.args(e, ())
            return ir.ChannelClose(name, "unit", e.span)
        if kind is None:
            raise UnknownNameError(f"cannot find '{name}' in this scope", e.receiver.span)
        raise TypeMismatchError(f"'{name}' is {a_or_an(kind)}; it has no methods", e.span)

    def _no_method(self, e: ast.MethodCall, what: str, methods: str) -> UnknownNameError:
        return UnknownNameError(
            f"no method '{e.method}' on {what}", self.syms.method_span(e), (Note(f"its methods are {methods}"),)
        )
