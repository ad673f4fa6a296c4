"""Type checking of statements and function bodies, producing await-normal IR.

Each statement is checked with ``self.pre`` empty; the awaits hoisted out of
its expressions land there and are emitted before it. A ``while`` whose
condition awaits becomes ``loop { <hoisted>; if !cond { break; } body }`` so
the condition is re-evaluated (and re-awaited) on every iteration.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner import ir
from gasync.planner.consteval import check_constant_shift
from gasync.planner.dropped import dropped_type, dropped_value
from gasync.planner.errors import (
    AwaitContextError,
    ConstEvalError,
    ControlFlowError,
    DuplicateNameError,
    ReadOnlyError,
    TypeMismatchError,
    UnknownNameError,
    plural,
)
from gasync.planner.exprs import FnState, is_numeric
from gasync.planner.literals import flexible, literal_block
from gasync.planner.recovery import recovering
from gasync.planner.reduces import ReducingLoops
from gasync.planner.selects import check_select
from gasync.planner.symbols import Symbols

COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|", "^=": "^"}
SHIFTS = {"<<=": "<<", ">>=": ">>"}


class BodyChecker(ReducingLoops):
    def __init__(
        self,
        syms: Symbols,
        fn: FnState,
        suspends_of: Callable[[str], bool],
        tail_types: dict[tuple[int, ir.Ty | None], ir.Ty] | None = None,
    ):
        self.syms = syms
        self.fn = fn
        self.pre = []
        self.suspends_of = suspends_of
        # the tail type of each async block body (by id and hint), shared with the probes of _tail_type
        self.tail_types = {} if tail_types is None else tail_types
        self.block_hints = {}

    # ---- blocks ----
    def block(
        self, b: ast.Block, tail_to: str | None = None, errors: list[GasyncError] | None = None, branch: bool = False
    ) -> tuple[ir.Stmt, ...]:
        """Check a block in a new scope. ``tail_to`` names where a tail value goes:
        'return' for a function body, a local for an async block, None elsewhere (a tail
        there must give no value; ``branch``: the block is an 'if''s). With ``errors``, a
        statement that fails adds its error there and the next is checked (planner/recovery.py)."""
        self.fn.scopes.append({})
        try:
            out: list[ir.Stmt] = []
            for s in b.stmts:
                out.extend(self.stmt(s) if errors is None else recovering(self, partial(self.stmt, s), s, errors))
            if b.tail is not None:
                tail = b.tail
                if errors is None:
                    out.extend(self._tail(tail, tail_to, branch))
                else:
                    out.extend(recovering(self, lambda: self._tail(tail, tail_to, branch), ast.ExprStmt(tail), errors))
            return tuple(out)
        finally:
            self.fn.scopes.pop()

    def _tail(self, e: ast.Expr, tail_to: str | None, branch: bool) -> list[ir.Stmt]:
        if tail_to == "return" and self.fn.ret != "unit":
            return self.stmt(ast.Return(e, e.span))
        if tail_to not in (None, "return"):
            value = self.expr(e, self.fn.locals[tail_to])
            return self._flush([ir.Let(tail_to, "=", value, e.span)])
        out = self.stmt(ast.ExprStmt(e, e.span))  # a tail that gives '()' (`if c { f().await }`)
        dropped = dropped_type(out[-1])
        if dropped is not None and tail_to == "return":  # `async fn g() { 5 }`: "'g' returns no value"
            return self.stmt(ast.Return(e, e.span))
        if dropped is not None:  # `if c { 1 } else { 2 }` as a statement: an error, as in Rust
            raise dropped_value(dropped, e.span, branch, self.fn.ret not in ("unit", "?"))
        return out

    def _flush(self, stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        pre, self.pre = self.pre, []
        return [*pre, *stmts]

    # ---- statements ----
    def stmt(self, s: ast.Stmt) -> list[ir.Stmt]:
        assert not self.pre
        method = getattr(self, "_s_" + type(s).__name__)
        result: list[ir.Stmt] = method(s)
        return result

    def _s_Let(self, s: ast.Let) -> list[ir.Stmt]:
        want = self.syms.scalar(s.type) if s.type is not None else None
        binding = (s.span.line, s.span.column, s.name)
        literal = want is None and not isinstance(s.value, ast.Reduce) and flexible(s.value, self.fn.flexible)
        literal = literal or (want is None and literal_block(s.value))  # `let p = async { 3 }.await;`
        if literal:
            hinted = self.fn.hints.get(binding)  # a later use's type (fnstate.Retype)
            want = hinted if isinstance(hinted, str) else None
        if literal and want is None:
            value = self._wide_literal(s.value, binding)
        else:
            value = self.expr(s.value, want)
        if value.ty == "unit":
            raise TypeMismatchError(f"'{s.name}' would have no value: this expression gives '()'", s.value.span)
        self._no_global_shadow(s.name, s.span)
        name = self.fn.fresh(s.name, value.ty)
        self.fn.scopes[-1][s.name] = name
        if literal and binding not in self.fn.hints:
            self.fn.defaulted[name] = binding
        elif s.type is None and (source := self.fn.source(value)) is not None:
            self.fn.defaulted[name] = source  # `let m = n + 1;`: n's type is m's
        return self._flush([ir.Let(name, "=", value, s.span)])

    def _wide_literal(self, e: ast.Expr | ast.Reduce, binding: tuple[int, int, str]) -> ir.Expr:
        """A literal-only `let` value: i32 where nothing decides; one past i32 (`let u =
        3000000000;`) takes i64, else u64, until a use decides (fnstate.FnState.provisional)."""
        try:
            return self.expr(e, None)
        except (TypeMismatchError, ConstEvalError) as err:  # or `let a = 1 << 40;` (decision 33)
            for wide in ("i64", "u64"):
                try:
                    value = self.expr(e, wide)
                except (TypeMismatchError, ConstEvalError):
                    continue
                self.fn.provisional[binding] = (err, wide)
                return value
            raise

    def _s_LetTuple(self, s: ast.LetTuple) -> list[ir.Stmt]:
        if not isinstance(s.value, ast.Await) or not _is_join(s.value.future):
            raise TypeMismatchError("only 'join(...).await' gives a tuple to destructure", s.value.span)
        literals = self.join_literals(s)  # `join(async { 3 }, ...)`: a later use may retype its name
        fut = self.await_future(s.value)
        assert isinstance(fut, ir.Join) and isinstance(fut.ty, ir.FutureT)
        outs = fut.ty.output
        assert isinstance(outs, ir.TupleT)
        if len(outs.elems) != len(s.names):
            raise TypeMismatchError(
                f"join gives {plural(len(outs.elems), 'value')} but the pattern has {len(s.names)}", s.span
            )
        targets: list[str | None] = []
        for user, ty in zip(s.names, outs.elems, strict=True):
            if user is None or ty == "unit":
                if user is not None:
                    raise TypeMismatchError(f"'{user}' would have no value: that future gives '()'", s.span)
                targets.append(None)
                continue
            if isinstance(ty, ir.TupleT):
                raise TypeMismatchError(
                    f"'{user}' would be the tuple {ty} of a nested join, which cannot be bound",
                    s.span,
                    (Note("write '_' in its place, or await the inner join on its own with 'let (..) ='"),),
                )
            self._no_global_shadow(user, s.span)
            name = self.fn.fresh(user, ty)
            targets.append(name)
            if user in literals:
                self.fn.defaulted[name] = literals[user]
        for user, target in zip(s.names, targets, strict=True):
            if user is not None and target is not None:
                self.fn.scopes[-1][user] = target
        return self._flush([self.await_stmt(tuple(targets), fut, s.span)])

    def _no_global_shadow(self, name: str, span: ast.Span) -> None:
        kind = self.syms.kind(name)
        if kind in ("const", "buffer", "shared", "signal", "channel"):
            raise DuplicateNameError(f"let bindings cannot shadow the {kind} '{name}'", span)

    def _s_Assign(self, s: ast.Assign) -> list[ir.Stmt]:
        if isinstance(s.target, ast.Index):
            buf = self.syms.buffer(s.target.base)
            index, constant = self.indices(s.target, buf.shape)
            value = self._assign_value(s, buf.elem)
            return self._flush([ir.Store(s.target.base.id, index, s.op, value, s.span, proven=constant)])
        found = self.fn.lookup(s.target.id)
        if found is None:
            kind = self.syms.kind(s.target.id)
            if kind == "shared":  # read-only to '=': its writes are atomic, by method
                raise ReadOnlyError(
                    f"cannot assign to the shared scalar '{s.target.id}' with '{s.op}'",
                    _assign_span(s),
                    (Note(f"write it with {s.target.id}.store(v) or an atomic method such as fetch_add"),),
                )
            if kind == "const":
                raise ReadOnlyError(f"cannot assign to the const '{s.target.id}': a const is read-only", s.target.span)
            if kind is not None:
                raise TypeMismatchError(f"cannot assign to the {kind} '{s.target.id}'", s.target.span)
            raise UnknownNameError(f"cannot find value '{s.target.id}' in this scope", s.target.span)
        name, depth = found
        if name in self.fn.readonly:
            raise ReadOnlyError(f"cannot assign to '{s.target.id}': a loop variable is read-only", _assign_span(s))
        if self.fn.parallel and depth < self.fn.parallel:
            raise ReadOnlyError(
                f"cannot assign to '{s.target.id}' inside '{self.fn.parallel_kind} for': task locals are read-only",
                _assign_span(s),
                (Note("carry results out through a buffer or an atomic"),),
            )
        value = self._assign_value(s, self.fn.locals[name])
        return self._flush([ir.Let(name, s.op, value, s.span)])

    def _assign_value(self, s: ast.Assign, ty: ir.Ty) -> ir.Expr:
        if s.op in SHIFTS:
            if ty not in ir.INTS:
                raise TypeMismatchError(f"cannot apply '{s.op}' to {ty}", s.span)
            value = self.expr(s.value, None)
            if value.ty not in ir.INTS:
                raise TypeMismatchError(f"cannot shift by {value.ty}", s.value.span)
            check_constant_shift(s.op, str(ty), value, s.span)  # `x <<= 64` (decision 33)
            return value
        op = COMPOUND.get(s.op)
        if op in ("+", "-", "*", "/", "%") and not is_numeric(ty):
            raise TypeMismatchError(f"cannot apply '{s.op}' to {ty}", s.span)
        if op in ("&", "|", "^") and not (ty in ir.INTS or ty == "bool"):
            raise TypeMismatchError(f"cannot apply '{s.op}' to {ty}", s.span)
        return self.expr(s.value, ty)

    def _s_ExprStmt(self, s: ast.ExprStmt) -> list[ir.Stmt]:
        if isinstance(s.expr, ast.Await):
            fut = self.await_future(s.expr)
            return self._flush([self.await_stmt((), fut, s.span)])
        value = self.expr(s.expr, None)
        return self._flush([ir.Eval(value, s.span)])

    def _s_If(self, s: ast.If) -> list[ir.Stmt]:
        cond = self.expr(s.cond, "bool")
        pre, self.pre = self.pre, []
        then = self.block(s.then, branch=True)
        orelse: tuple[ir.Stmt, ...] = ()
        if isinstance(s.orelse, ast.If):
            orelse = tuple(self.stmt(s.orelse))
        elif s.orelse is not None:
            orelse = self.block(s.orelse, branch=True)
        return [*pre, ir.If(cond, then, orelse, s.span)]

    def _s_While(self, s: ast.While) -> list[ir.Stmt]:
        cond = self.expr(s.cond, "bool")
        pre, self.pre = self.pre, []
        body = self._loop_body(s.body)
        if not pre:
            return [ir.While(cond, body, s.span)]
        exit_ = ir.If(ir.Unary("!", cond, "bool", s.span), (ir.Break(s.span),), (), s.span)
        return [ir.Loop((*pre, exit_, *body), s.span)]

    def _s_Loop(self, s: ast.Loop) -> list[ir.Stmt]:
        return [ir.Loop(self._loop_body(s.body), s.span)]

    def _loop_body(self, b: ast.Block) -> tuple[ir.Stmt, ...]:
        self.fn.loops += 1
        try:
            return self.block(b)
        finally:
            self.fn.loops -= 1

    def _s_For(self, s: ast.For, reduce: tuple[str, ast.Span, ir.Ty | None] | None = None) -> list[ir.Stmt]:
        if s.kind != "seq" and (self.fn.kind == "fn" or self.fn.async_depth):
            # the warp leaves the poll to run the loop with all its lanes (parallel) or the
            # task waits for the chunks (bulk): both need a state machine to come back to
            where = "an async block" if self.fn.async_depth else "a plain fn"
            raise AwaitContextError(
                f"'{s.kind} for' is not allowed in {where}",
                s.span,
                (Note("use it in a task or an async fn"),),
            )
        binding = (s.span.line, s.span.column, s.var)
        literal = flexible(s.start, self.fn.flexible) and flexible(s.stop, self.fn.flexible)
        start, stop = self.pair(s.start, s.stop, self.fn.hints.get(binding) if literal else None)
        if start.ty != stop.ty or start.ty not in ir.INTS:
            raise TypeMismatchError(f"a range needs two integers of one type, found {start.ty}..{stop.ty}", s.span)
        pre, self.pre = self.pre, []
        ty = start.ty
        stop_var = self.fn.temp(ty)
        self.fn.scopes.append({})
        var = self.fn.fresh(s.var, ty)
        if literal and binding not in self.fn.hints:
            self.fn.defaulted[var] = binding
        elif not literal and (source := self.fn.source(stop) or self.fn.source(start)) is not None:
            self.fn.defaulted[var] = source  # `for k in 0..n` with n a defaulted local: n's type is k's
        self.fn.scopes[-1][s.var] = var
        self.fn.readonly.add(var)
        saved = (self.fn.loops, self.fn.parallel)
        if s.kind != "seq":
            if self.fn.parallel:
                raise ControlFlowError(f"'{s.kind} for' cannot be nested inside another parallel loop", s.span)
            self.fn.loops, self.fn.parallel = 0, len(self.fn.scopes)
            self.fn.parallel_kind = s.kind
        else:
            self.fn.loops += 1
        try:
            if reduce is not None:  # its tail typed once, in the value's context
                body, value = self._reducing_body(s.body, reduce)
            else:
                body, value = self.block(s.body), None
        finally:
            self.fn.loops, self.fn.parallel = saved
            self.fn.scopes.pop()
        self.fn.loop_ids += 1
        summary = None
        if reduce is not None and value is not None:
            summary = ir.Reduction(reduce[0], value.name, self.fn.temp(value.ty), value.ty, reduce[1])
            if value.name in self.fn.defaulted:  # `{ k }` over a literal range: a later use may retype k
                self.fn.defaulted[summary.into] = self.fn.defaulted[value.name]
        loop = ir.For(s.kind, var, start, stop_var, stop, body, self.fn.loop_ids, s.span, summary)
        return [*pre, loop]

    def _s_ForAwait(self, s: ast.ForAwait) -> list[ir.Stmt]:
        if self.syms.kind(s.channel.id) != "channel":
            raise TypeMismatchError(f"'for await' reads from a channel; '{s.channel.id}' is not one", s.channel.span)
        if self.fn.kind == "fn" or self.fn.parallel:
            raise AwaitContextError("'for await' is only allowed where '.await' is", s.span)
        elem = self.syms.channels[s.channel.id].elem
        self.fn.sites += 1
        site = self.fn.sites
        self.fn.scopes.append({})
        var = self.fn.fresh(s.var, elem)
        self.fn.scopes[-1][s.var] = var
        try:
            body = self._loop_body(s.body)
        finally:
            self.fn.scopes.pop()
        return [ir.ForAwait(var, s.channel.id, body, site, s.span)]

    def _s_Break(self, s: ast.Break) -> list[ir.Stmt]:
        if not self.fn.loops:
            raise self._no_loop("break", s.span)
        return [ir.Break(s.span)]

    def _s_Continue(self, s: ast.Continue) -> list[ir.Stmt]:
        if not self.fn.loops:
            raise self._no_loop("continue", s.span)
        return [ir.Continue(s.span)]

    def _no_loop(self, word: str, span: ast.Span) -> ControlFlowError:
        """A break or continue with no sequential loop around it in its body: where it stands in a
        parallel loop's body, say so (its iterations are not a sequence that one could leave)."""
        if self.fn.parallel:
            return ControlFlowError(
                f"'{word}' cannot leave a '{self.fn.parallel_kind} for': its iterations run at once",
                keyword_span(span, word),
                (Note("skip an iteration's work with 'if', or use a sequential 'for' or 'while'"),),
            )
        return ControlFlowError(f"'{word}' outside of a loop", keyword_span(span, word))

    def _s_Return(self, s: ast.Return) -> list[ir.Stmt]:
        if self.fn.parallel:
            raise ControlFlowError(
                f"'return' is not allowed inside '{self.fn.parallel_kind} for'", keyword_span(s.span, "return")
            )
        ret = self.fn.ret
        if ret == "?":  # typing a block's tail: its returns are checked in the real pass
            if s.value is None or flexible(s.value):
                # a literal takes the block's type there, whatever it is: it says nothing here
                # (and `return 4294967295;` in a u32 block must not be read as an i32)
                return [ir.Return(None, s.span)]
            return self._flush([ir.Return(self.expr(s.value, None), s.span)])
        if self.fn.async_depth:
            return self._block_return(s)
        if s.value is None:
            if ret != "unit":
                raise TypeMismatchError(f"'return;' in '{self.fn.name}', which returns {ret}", s.span)
            return [ir.Return(None, s.span)]
        if ret == "unit":
            what = "a task" if self.fn.kind == "task" else f"'{self.fn.name}'"
            raise TypeMismatchError(f"{what} returns no value", s.value.span)
        value = self.expr(s.value, ret)
        return self._flush([ir.Return(value, s.span)])

    def _s_Select(self, s: ast.Select) -> list[ir.Stmt]:
        return check_select(self, s)


def keyword_span(span: ast.Span, word: str) -> ast.Span:
    """The keyword ``word`` a statement's span starts with (``break;`` without its ``;``)."""
    return ast.Span(span.line, span.column, span.line, span.column + len(word))


def _assign_span(s: ast.Assign) -> ast.Span:
    """An assignment without its ``;``: target to value."""
    return ast.Span(s.target.span.line, s.target.span.column, s.value.span.end_line, s.value.span.end_column)


def _is_join(e: ast.Expr) -> bool:
    return isinstance(e, ast.Call) and e.func == "join"
