"""Deep expressions cut into temporaries, before any code is rendered.

Every IR node renders as at least one call (``int32(a + b)``), and Python's
parser gives up at 200 nested parentheses, so a 1,000-term sum or a long
chain of unary operators cannot be rendered as one Python expression. This
pass rewrites each statement whose expressions are deeper than ``MAX_HEIGHT``:
subtrees of height ``CHUNK`` become ``let`` temporaries computed just before
the statement, in the order Python would have evaluated them. A ``while``
whose condition is cut becomes a ``loop`` that tests it first, so the
temporaries are computed on every turn.

Hoisting moves a subtree's evaluation before the parts of the statement that
Python evaluates earlier, and out from under ``&&``/``||``. That is exact when
no part of the statement has an effect (atomics, calls, signal sets, close)
and the moved subtree reads no buffer from under a short-circuit operator (a
guard such as ``i < n && x[i] > 0`` must keep its guard). Statements with
effects are cut only along the subtree evaluated first; anything else is
reported, located, with the advice to split it with ``let``.

Programs without deep expressions come out unchanged (the same objects).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from gasync.codegen.machine import UnsupportedError
from gasync.planner import ir
from gasync.planner.model import Function, Plan
from gasync.planner.walk import exprs_of, has_effect, operands, rebuild, replaced

MAX_HEIGHT = 40  # deeper expressions are cut (each level is one or two Python parentheses)
CHUNK = 24  # the height of each cut-out subtree


def flatten_plan(plan: Plan) -> Plan:
    """``plan`` with every too-deep expression cut into temporaries."""
    functions = tuple(_Flattener(f).function() for f in plan.functions)
    tasks = tuple(dataclasses.replace(t, body=_Flattener(t.body).function()) for t in plan.tasks)
    if all(a is b for a, b in zip(functions, plan.functions, strict=True)) and all(
        a.body is b.body for a, b in zip(tasks, plan.tasks, strict=True)
    ):
        return plan
    return dataclasses.replace(plan, functions=functions, tasks=tasks)


def _reads(e: ir.Expr) -> bool:
    return isinstance(e, ir.Load) or any(_reads(k) for k in operands(e))


class _Flattener:
    def __init__(self, fn: Function):
        self.fn = fn
        self.new: list[tuple[str, ir.Ty]] = []
        self._height: dict[int, int] = {}

    def function(self) -> Function:
        body = self.body(self.fn.body)
        if body is self.fn.body:
            return self.fn
        return dataclasses.replace(self.fn, body=body, locals=(*self.fn.locals, *self.new))

    def height(self, e: ir.Expr) -> int:
        key = id(e)
        if key not in self._height:
            self._height[key] = 1 + max((self.height(k) for k in operands(e)), default=0)
        return self._height[key]

    def body(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out += self.stmt(s)
        same = len(out) == len(stmts) and all(a is b for a, b in zip(out, stmts, strict=True))
        return stmts if same else tuple(out)

    # -- statements --
    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.While):
            return self._while(s)
        pre: list[ir.Stmt] = []
        cut = self._cutter(s, pre)
        if isinstance(s, ir.Let):
            s = replaced(s, value=cut(s.value, True))
        elif isinstance(s, ir.Eval):
            s = replaced(s, expr=cut(s.expr, True))
        elif isinstance(s, ir.Return) and s.value is not None:
            s = replaced(s, value=cut(s.value, True))
        elif isinstance(s, ir.Store):
            s = replaced(s, value=cut(s.value, False), index=tuple(cut(i, False) for i in s.index))
        elif isinstance(s, ir.If):
            s = replaced(s, cond=cut(s.cond, True), then=self.body(s.then), orelse=self.body(s.orelse))
        elif isinstance(s, ir.For):
            s = replaced(s, start=cut(s.start, True), stop=cut(s.stop, False), body=self.body(s.body))
        elif isinstance(s, ir.Loop | ir.ForAwait):
            s = replaced(s, body=self.body(s.body))
        elif isinstance(s, ir.AwaitS):
            s = replaced(s, future=self.future(s.future, cut))
        elif isinstance(s, ir.Select):
            arms = tuple(replaced(a, future=self.future(a.future, cut), body=self.body(a.body)) for a in s.arms)
            s = replaced(s, arms=arms)
        return [*pre, s]

    def _while(self, s: ir.While) -> list[ir.Stmt]:
        pre: list[ir.Stmt] = []
        cond = self._cutter(s, pre)(s.cond, True)
        body = self.body(s.body)
        if not pre:
            return [s if body is s.body else dataclasses.replace(s, body=body)]
        test = ir.If(ir.Unary("!", cond, "bool", s.cond.span), (ir.Break(s.span),), (), s.span)
        return [ir.Loop((*pre, test, *body), s.span)]

    def future(self, f: ir.Future, cut: Callable[[ir.Expr, bool], ir.Expr]) -> ir.Future:
        if isinstance(f, ir.AsyncCall):
            return replaced(f, args=tuple(cut(a, False) for a in f.args))
        if isinstance(f, ir.Sleep):
            return replaced(f, ns=cut(f.ns, False))
        if isinstance(f, ir.Send):
            return replaced(f, value=cut(f.value, False))
        if isinstance(f, ir.Join):
            return replaced(f, futures=tuple(self.future(x, cut) for x in f.futures))
        if isinstance(f, ir.AsyncBlock):
            return replaced(f, body=self.body(f.body))
        return f

    # -- expressions --
    def _cutter(self, s: ir.Stmt, pre: list[ir.Stmt]) -> Callable[[ir.Expr, bool], ir.Expr]:
        """A function that cuts one of ``s``'s expressions, appending its temporaries to
        ``pre``; ``first``: the expression is the first that ``s`` evaluates."""
        effects = any(has_effect(e) for e in exprs_of(s))

        def cut(e: ir.Expr, first: bool) -> ir.Expr:
            if self.height(e) <= MAX_HEIGHT:
                return e
            return self._cut(e, pre, spine=first or not effects, guarded=False, effects=effects, span=s.span)

        return cut

    def _cut(self, e: ir.Expr, pre: list[ir.Stmt], spine: bool, guarded: bool, effects: bool, span: object) -> ir.Expr:
        """``e`` with subtrees of height CHUNK cut out, post-order (evaluation order)."""
        short = isinstance(e, ir.Binary) and e.op in ("&&", "||")
        kids = []
        height = 0
        for j, k in enumerate(operands(e)):
            if self.height(k) >= CHUNK:
                k = self._cut(k, pre, spine and j == 0, guarded or (short and j > 0), effects, span)
            kids.append(k)
            height = max(height, 1 if isinstance(k, ir.Var) else self.height(k))
        e = rebuild(e, kids)
        if height + 1 < CHUNK:
            return e
        if (effects and not spine) or (guarded and (_reads(e) or has_effect(e))):
            raise UnsupportedError(
                f"this expression nests more than {MAX_HEIGHT} levels deep around calls, atomics or a guarded read;"
                " split it into smaller ones with 'let'",
                span,
            )
        name = f"$td{len(self.new) + 1}"
        self.new.append((name, e.ty))
        pre.append(ir.Let(name, "=", e, span))  # type: ignore[arg-type]
        return ir.Var(name, e.ty)
