"""Checking a ``select`` statement: each arm's future, its binding and its body (planner/stmts.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gasync.dsl import ast
from gasync.dsl.diagnostics import Note
from gasync.planner import ir
from gasync.planner.errors import AwaitContextError, TypeMismatchError

if TYPE_CHECKING:
    from gasync.planner.stmts import BodyChecker


def check_select(ck: BodyChecker, s: ast.Select) -> list[ir.Stmt]:
    if ck.fn.kind == "fn" or ck.fn.parallel:
        raise AwaitContextError("'select' is only allowed where '.await' is", s.span)
    futs = [ck.future(arm.future) for arm in s.arms]
    pre, ck.pre = ck.pre, []
    ck.fn.sites += 1
    site = ck.fn.sites
    arms = []
    for arm, fut in zip(s.arms, futs, strict=True):
        out = fut.ty.output if isinstance(fut.ty, ir.FutureT) else "unit"
        ck.fn.scopes.append({})
        target = None
        if arm.binding is not None:
            if out == "unit":
                raise TypeMismatchError(f"'{arm.binding}' would have no value: that future gives '()'", arm.span)
            if isinstance(out, ir.TupleT):
                raise TypeMismatchError(
                    f"'{arm.binding}' would be the tuple {out} of a join, which a select arm cannot bind",
                    arm.span,
                    (Note("write '_ = join(...)' and let the joined futures store their results"),),
                )
            target = ck.fn.fresh(arm.binding, out)
            ck.fn.scopes[-1][arm.binding] = target
        try:
            body = ck.block(arm.body)
        finally:
            ck.fn.scopes.pop()
        arms.append(ir.SelectArm(target, fut, body, arm.span))
    return [*pre, ir.Select(tuple(arms), site, s.span)]
