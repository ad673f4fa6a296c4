"""Walking IR bodies: every statement, every expression, in source order."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, TypeVar

from gasync.planner import ir

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

N = TypeVar("N", bound="DataclassInstance")

LOOPS = (ir.Loop, ir.While, ir.For, ir.ForAwait)


def children(s: ir.Stmt, into_futures: bool = True) -> Iterator[tuple[ir.Stmt, ...]]:
    """The nested bodies of a statement; with ``into_futures``, async block bodies too."""
    if isinstance(s, ir.If):
        yield s.then
        yield s.orelse
    elif isinstance(s, LOOPS):
        yield s.body
    elif isinstance(s, ir.Select):
        for arm in s.arms:
            if into_futures:
                yield from future_bodies(arm.future)
            yield arm.body
    elif isinstance(s, ir.AwaitS) and into_futures:
        yield from future_bodies(s.future)


def future_bodies(f: ir.Future) -> Iterator[tuple[ir.Stmt, ...]]:
    if isinstance(f, ir.AsyncBlock):
        yield f.body
    elif isinstance(f, ir.Join):
        for sub in f.futures:
            yield from future_bodies(sub)


def stmts_in(body: tuple[ir.Stmt, ...], into_loops: bool = True, into_futures: bool = True) -> Iterator[ir.Stmt]:
    """Every statement of ``body`` and of the bodies nested in it, pre-order.

    With an explicit stack rather than nested generators, so a body nested
    thousands deep costs neither recursion nor a chain of ``yield from`` per item.
    """
    stack: list[Iterator[ir.Stmt]] = [iter(body)]
    while stack:
        s = next(stack[-1], None)
        if s is None:
            stack.pop()
            continue
        yield s
        if into_loops or not isinstance(s, LOOPS):
            subs = list(children(s, into_futures))
            stack.extend(iter(sub) for sub in reversed(subs))


def stmts_in_loops(body: tuple[ir.Stmt, ...]) -> Iterator[tuple[ir.Stmt, bool]]:
    """``stmts_in(body)``'s statements, each with whether a loop holds it (in its body, at any
    depth, async blocks included): one walk, where asking each loop for its own statements
    again took time quadratic in the nesting."""
    stack: list[tuple[Iterator[ir.Stmt], bool]] = [(iter(body), False)]
    while stack:
        it, inside = stack[-1]
        s = next(it, None)
        if s is None:
            stack.pop()
            continue
        yield s, inside
        below = inside or isinstance(s, LOOPS)
        subs = list(children(s))
        stack.extend((iter(sub), below) for sub in reversed(subs))


def always_returns(body: tuple[ir.Stmt, ...]) -> bool:
    """Whether every path through ``body`` ends in a ``return`` (or a loop that never breaks)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ir.Return):
        return True
    if isinstance(last, ir.If):
        return always_returns(last.then) and always_returns(last.orelse)
    if isinstance(last, ir.Loop):
        return not any(isinstance(s, ir.Break) for s in stmts_in(last.body, into_loops=False))
    return False


def exprs_of(s: ir.Stmt) -> Iterator[ir.Expr]:
    """The expressions a statement evaluates directly (not those of nested bodies)."""
    if isinstance(s, ir.Let | ir.Eval):
        yield s.value if isinstance(s, ir.Let) else s.expr
    elif isinstance(s, ir.Store):
        yield from s.index
        yield s.value
    elif isinstance(s, ir.If | ir.While):
        yield s.cond
    elif isinstance(s, ir.For):
        yield s.start
        yield s.stop
    elif isinstance(s, ir.Return) and s.value is not None:
        yield s.value
    elif isinstance(s, ir.AwaitS):
        yield from future_args(s.future)
    elif isinstance(s, ir.Select):
        for arm in s.arms:
            yield from future_args(arm.future)


def future_args(f: ir.Future) -> Iterator[ir.Expr]:
    if isinstance(f, ir.AsyncCall):
        yield from f.args
    elif isinstance(f, ir.Sleep):
        yield f.ns
    elif isinstance(f, ir.Send):
        yield f.value
    elif isinstance(f, ir.Join):
        for sub in f.futures:
            yield from future_args(sub)


def subexprs(e: ir.Expr) -> Iterator[ir.Expr]:
    """``e`` and every expression inside it, pre-order (with an explicit stack, as stmts_in)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(operands(x)))


def operands(e: ir.Expr) -> tuple[ir.Expr, ...]:
    """The expressions directly inside ``e``, left to right."""
    if isinstance(e, ir.Load):
        return e.index
    if isinstance(e, ir.SharedOp | ir.Call):
        return e.args
    if isinstance(e, ir.BufAtomic):
        return (*e.index, e.value)
    if isinstance(e, ir.Unary):
        return (e.operand,)
    if isinstance(e, ir.Binary):
        return (e.left, e.right)
    if isinstance(e, ir.Cast):
        return (e.expr,)
    return ()


def has_effect(e: ir.Expr) -> bool:
    """Whether evaluating ``e`` can change anything: atomics, calls, signal sets, a close."""
    here = (
        isinstance(e, ir.BufAtomic | ir.ChannelClose)
        or isinstance(e, ir.SharedOp)
        and e.op != "load"
        or isinstance(e, ir.SignalOp)
        and e.op == "set"
        or isinstance(e, ir.Call)
        and e.kind != "builtin"
    )
    return here or any(has_effect(k) for k in operands(e))


def rebuild(e: ir.Expr, kids: list[ir.Expr]) -> ir.Expr:
    """``e`` with ``kids`` as its operands (in ``operands``' order)."""
    if isinstance(e, ir.Load):
        return dataclasses.replace(e, index=tuple(kids))
    if isinstance(e, ir.SharedOp | ir.Call):
        return dataclasses.replace(e, args=tuple(kids))
    if isinstance(e, ir.BufAtomic):
        return dataclasses.replace(e, index=tuple(kids[:-1]), value=kids[-1])
    if isinstance(e, ir.Unary):
        return dataclasses.replace(e, operand=kids[0])
    if isinstance(e, ir.Binary):
        return dataclasses.replace(e, left=kids[0], right=kids[1])
    if isinstance(e, ir.Cast):
        return dataclasses.replace(e, expr=kids[0])
    return e


def replaced(node: N, **changes: object) -> N:
    """``node`` with ``changes``, or ``node`` itself when every change is no change."""
    if all(_same(getattr(node, k), v) for k, v in changes.items()):
        return node
    return dataclasses.replace(node, **changes)


def _same(a: object, b: object) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
    return a is b
