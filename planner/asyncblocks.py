"""Type checking of async blocks: their value type, `return` inside them, and whether they suspend.

A block's value type is its tail's, found by a probe that checks the tail in a
throw-away state (memoised per block and hint, so nested blocks cost linear
time); without a tail, its first `return` decides (``BLOCK_INFER`` until then).
A `return` leaves the block, not the enclosing fn, as in a Rust async block.
"""

from __future__ import annotations

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner import ir
from gasync.planner.errors import AwaitContextError, ControlFlowError, TypeMismatchError
from gasync.planner.exprs import ExprChecker, FnState
from gasync.planner.fnstate import Binding
from gasync.planner.literals import flexible, literal_future
from gasync.planner.walk import always_returns, stmts_in

BLOCK_INFER = "<infer>"  # the value type of an async block without a tail, until a `return` sets it


class AsyncBlockChecker(ExprChecker):
    """The async-block half of planner/stmts.py's BodyChecker (which defines ``block`` and ``stmt``)."""

    tail_types: dict[tuple[int, ir.Ty | None], ir.Ty]

    def block(
        self, b: ast.Block, tail_to: str | None = None, errors: list[GasyncError] | None = None
    ) -> tuple[ir.Stmt, ...]:
        raise NotImplementedError

    def stmt(self, s: ast.Stmt) -> list[ir.Stmt]:
        raise NotImplementedError

    def _flush(self, stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        raise NotImplementedError

    def _block_return(self, s: ast.Return) -> list[ir.Stmt]:
        """``return`` in an async block leaves the block (not the fn) and gives its value."""
        if self.fn.ret == BLOCK_INFER:  # a block without a tail: its first return decides
            value = self.expr(s.value, None) if s.value is not None else None
            self.fn.ret = value.ty if value is not None else "unit"
            return self._flush([ir.Return(value, s.span)])
        if s.value is None:
            if self.fn.ret != "unit":
                raise TypeMismatchError(f"'return;' in an async block whose value is {self.fn.ret}", s.span)
            return [ir.Return(None, s.span)]
        if self.fn.ret == "unit":
            found = self.expr(s.value, None).ty
            raise TypeMismatchError(f"mismatched types: this async block's value is (), found {found}", s.value.span)
        return self._flush([ir.Return(self.expr(s.value, self.fn.ret), s.span)])

    def async_block(self, e: ast.AsyncBlock) -> ir.AsyncBlock:
        if self.fn.kind == "fn":
            raise AwaitContextError("async blocks are only allowed inside async fns and tasks", e.span)
        result = None
        # The block's value type is its tail's (see block_type); without a tail, its first
        # `return`'s (BLOCK_INFER). A `return` leaves the block, as in a Rust async block.
        saved_ret = self.fn.ret
        saved = (self.fn.loops, self.pre)
        self.fn.loops, self.pre = 0, []
        ty: ir.Ty = BLOCK_INFER
        hint = self.block_hints.get(id(e))
        try:
            if e.body.tail is not None:
                ty = self._tail_type(e.body, hint)
                if self.fn.ret == "?":  # probing an enclosing block: only this block's type is needed
                    return ir.AsyncBlock((), None, ir.FutureT(ty), False, e.span)
                if ty != "unit":
                    result = self.fn.temp(ty)
            self.fn.ret = hint if ty == BLOCK_INFER and hint is not None else ty
            self.fn.async_depth += 1
            try:
                body = self.block(e.body, tail_to=result)
            finally:
                self.fn.async_depth -= 1
            ty = "unit" if self.fn.ret == BLOCK_INFER else self.fn.ret
        finally:
            self.fn.ret = saved_ret
            self.fn.loops, self.pre = saved
        if e.body.tail is None and ty != "unit":
            _block_gives_value_on_every_path(body, ty, e.span)
            result = self.fn.temp(ty)
        # A `return` inside a block leaves the block only; the code generator inlines blocks
        # that never suspend, so one with a `return` is compiled as a state machine instead.
        suspends = any_suspends(body) or any(isinstance(x, ir.Return) for x in stmts_in(body, into_futures=False))
        return ir.AsyncBlock(body, result, ir.FutureT(ty), suspends, e.span)

    def join_literals(self, s: ast.LetTuple) -> dict[str, Binding]:
        """``let (p, q) = join(async { 3 }, f()).await;``: each name a ``literal_future`` gives
        takes the type a later use gave it (a hint for its block), else is returned with its
        binding, to be defaulted as a ``let`` of a literal is (decision 59)."""
        assert isinstance(s.value, ast.Await) and isinstance(s.value.future, ast.Call)
        defaulted: dict[str, Binding] = {}
        for user, arg in zip(s.names, s.value.future.args, strict=False):  # (a count that differs fails later)
            binding = (s.span.line, s.span.column, user or "")
            if user is not None and literal_future(arg):
                hinted = self.fn.hints.get(binding)
                if isinstance(hinted, str):
                    self.block_hints[id(arg)] = hinted
                else:
                    defaulted[user] = binding
        return defaulted

    def _tail_type(self, b: ast.Block, hint: ir.Ty | None) -> ir.Ty:
        """The type of an async block's tail, probed once per block: a probe types nested
        blocks by their own (memoised) probes without checking them again, so nested
        blocks cost linear time, not one extra pass per level."""
        key = (id(b), hint)
        if key not in self.tail_types:
            probe = FnState(
                self.fn.name,
                self.fn.kind,
                "?",
                dict(self.fn.locals),
                list(self.fn.scopes),
                hints=self.fn.hints,  # a use in the block may retype a local of the function (fnstate.Retype)
                defaulted=dict(self.fn.defaulted),
                provisional=self.fn.provisional,  # and a use there may decide a wide literal's type
                decided=self.fn.decided,
            )
            checker = type(self)(self.syms, probe, self.suspends_of, self.tail_types)  # type: ignore[call-arg]
            self.tail_types[key] = checker.block_type(b, hint)
        return self.tail_types[key]

    def block_type(self, b: ast.Block, hint: ir.Ty | None = None) -> ir.Ty:
        """The type of a block's tail expression (checked in a throw-away state); where the
        tail is a bare literal, a ``return`` of a typed value decides, as Rust infers one type,
        and else the type the await's context expects (``hint``: ``let v: u32 = ...``)."""
        self.fn.scopes.append({})
        body = tuple(x for s in b.stmts for x in self.stmt(s))
        assert b.tail is not None
        tail = self.expr(b.tail, hint if hint is not None and flexible(b.tail) else None)
        if not isinstance(tail, ir.Lit):
            self.fn.retype(tail, hint)  # `async { let g = 10; g * 2 }` where an i64 is wanted: g is one
            return tail.ty
        values = (r.value for r in stmts_in(body, into_futures=False) if isinstance(r, ir.Return))
        typed = [v.ty for v in values if v is not None and not isinstance(v, ir.Lit)]
        return typed[0] if typed else hint or tail.ty


def _block_gives_value_on_every_path(body: tuple[ir.Stmt, ...], ty: ir.Ty, span: ast.Span) -> None:
    if not always_returns(body):
        raise ControlFlowError(
            f"this async block gives {ty} on some paths but can reach its end without a value",
            span,
            (Note("end the block with 'return value;' or a final expression"),),
        )


def any_suspends(body: tuple[ir.Stmt, ...]) -> bool:
    # not into futures: an awaited async block's or join's own `suspends` already says
    # whether it can, so nested blocks are not walked again at every level
    return any(
        isinstance(s, ir.AwaitS)
        and s.suspends
        or isinstance(s, ir.Select | ir.ForAwait)
        or isinstance(s, ir.For)
        and s.kind != "seq"  # the warp runs the loop with all lanes, or awaits the chunks
        for s in stmts_in(body, into_futures=False)
    )
