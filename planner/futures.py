"""Type checking of futures: what ``.await``, ``join`` and ``select`` accept.

A future is an async fn call, ``yield_now()``, ``sleep(ns)``, a channel's
``send``/``recv``, a signal's ``wait()``, ``join(...)`` or an async block. It
is only ever an operand of ``.await``, ``join`` or a ``select`` arm: used as a
value it is an error, as is ``.await`` on a value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gasync.dsl import ast
from gasync.dsl.diagnostics import Note
from gasync.planner import ir
from gasync.planner.errors import ArityError, AwaitContextError, FutureMisuseError, TypeMismatchError
from gasync.planner.fnstate import CONST_FN, CONST_NOTE

if TYPE_CHECKING:
    from gasync.planner.fnstate import FnState
    from gasync.planner.symbols import Symbols


class FutureChecker:
    """The future half of the expression checker (mixed into ExprChecker)."""

    syms: Symbols
    fn: FnState
    pre: list[ir.Stmt]
    suspends_of: Callable[[str], bool]

    def args(self, e: ast.Call | ast.MethodCall, params: tuple[str, ...]) -> tuple[ir.Expr, ...]:
        raise NotImplementedError

    def _expr(self, e: ast.Expr, want: ir.Ty | None) -> ir.Expr:
        raise NotImplementedError

    def method_future(self, e: ast.MethodCall) -> ir.Future | None:
        kind = self.syms.kind(e.receiver.id)
        name = e.receiver.id
        if kind == "signal" and e.method == "wait":
            self.args(e, ())
            return ir.Wait(name, ir.FutureT("unit"), e.span)
        if kind == "channel" and e.method in ("send", "recv"):
            elem = self.syms.channels[name].elem
            if e.method == "send":
                (value,) = self.args(e, (elem,))
                return ir.Send(name, value, ir.FutureT("unit"), e.span)
            self.args(e, ())
            return ir.Recv(name, ir.FutureT(elem), e.span)
        return None

    def _await_value(self, e: ast.Await) -> ir.Expr:
        fut = self.await_future(e)
        out = fut.ty.output if isinstance(fut.ty, ir.FutureT) else "unit"
        if out == "unit":
            raise TypeMismatchError("this await produces no value ('()')", e.span)
        if isinstance(out, ir.TupleT):
            raise TypeMismatchError(
                "join(...) gives a tuple: destructure it with 'let (a, b) = join(...).await;'", e.span
            )
        t = self.fn.temp(out)
        self.pre.append(self.await_stmt((t,), fut, e.span))
        return ir.Var(t, out, e.span)

    def await_future(self, e: ast.Await) -> ir.Future:
        """Check the operand of ``.await`` in an async context."""
        if self.fn.name == CONST_FN:  # (a const, a size, an initialiser: nothing runs them on the device)
            raise AwaitContextError(
                "'.await' is not allowed in a constant expression",
                e.span,
                (Note(CONST_NOTE),),
            )
        if self.fn.kind == "fn":
            raise AwaitContextError(
                "'.await' is only allowed inside async fns, async blocks and tasks",
                e.span,
                (Note(f"'{self.fn.name}' is a plain fn; declare it 'async fn'"),),
            )
        if self.fn.parallel:
            raise AwaitContextError(f"'.await' is not allowed inside '{self.fn.parallel_kind} for'", e.span)
        return self.future(e.future)

    def await_stmt(self, targets: tuple[str | None, ...], fut: ir.Future, span: ast.Span) -> ir.AwaitS:
        self.fn.sites += 1
        return ir.AwaitS(targets, fut, self.fn.sites, self.future_suspends(fut), span)

    def future(self, e: ast.Expr) -> ir.Future:
        """Check an expression that must be a future."""
        if isinstance(e, ast.Call):
            if self.syms.kind(e.func) == "async fn":
                params, ret = self.syms.signature(e.func)
                return ir.AsyncCall(e.func, self.args(e, params), ir.FutureT(ret), e.span)
            if e.func == "yield_now" and self.syms.kind(e.func) is None:
                self.args(e, ())
                return ir.YieldNow(ir.FutureT("unit"), e.span)
            if e.func == "sleep" and self.syms.kind(e.func) is None:
                (ns,) = self.args(e, ("u64",))
                return ir.Sleep(ns, ir.FutureT("unit"), e.span)
            if e.func == "join" and self.syms.kind(e.func) is None:
                if len(e.args) < 1:
                    raise ArityError("join needs at least one future", e.span)
                futs = tuple(self.future(a) for a in e.args)
                outs = tuple(f.ty.output if isinstance(f.ty, ir.FutureT) else "unit" for f in futs)
                return ir.Join(futs, ir.FutureT(ir.TupleT(outs)), e.span)
        if isinstance(e, ast.MethodCall):
            fut = self.method_future(e)
            if fut is not None:
                return fut
        if isinstance(e, ast.AsyncBlock):
            return self.async_block(e)
        if isinstance(e, ast.Await):
            raise FutureMisuseError("'.await' on a value that was already awaited", e.span)
        value = self._expr(e, None)
        raise FutureMisuseError(f"'.await' needs a future, but this is a value of type {value.ty}", e.span)

    def future_suspends(self, fut: ir.Future) -> bool:
        if isinstance(fut, ir.AsyncCall):
            return self.suspends_of(fut.fn)
        if isinstance(fut, ir.Join):
            return any(self.future_suspends(f) for f in fut.futures)
        if isinstance(fut, ir.AsyncBlock):
            return fut.suspends
        return True

    def async_block(self, e: ast.AsyncBlock) -> ir.AsyncBlock:
        raise NotImplementedError  # provided by the statement checker
