"""Checking whole function bodies: fns, async fns and tasks (see stmts.py for statements)."""

from __future__ import annotations

from collections.abc import Callable

from gasync.dsl import ast
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, Note
from gasync.planner import ir
from gasync.planner.asyncblocks import any_suspends
from gasync.planner.errors import ControlFlowError, DuplicateNameError, FutureMisuseError, a_or_an
from gasync.planner.fnstate import CONST_FN, POISONED, Binding, FnState, Retype
from gasync.planner.model import Function
from gasync.planner.recovery import capped
from gasync.planner.stmts import BodyChecker
from gasync.planner.symbols import Symbols
from gasync.planner.walk import always_returns

MAX_RETYPES = 256  # bindings a body's later uses may retype (each at most once)


def check_function(
    syms: Symbols,
    item: ast.FnDef | ast.Task,
    suspends_of: Callable[[str], bool],
    task_var: tuple[str, str] | None,
    group_vars: tuple[tuple[str, str], ...] = (),
) -> Function:
    """Check one fn, async fn or task body; a body with errors raises an ErrorGroup of them
    (each top-level statement is checked, see planner/recovery.py)."""
    ret: ir.Ty = "unit"
    params: tuple[tuple[str, str], ...] = ()
    if isinstance(item, ast.Task):
        kind = "task"
    else:
        kind = "async" if item.is_async else "fn"
        ptypes, ret = syms.signature(item.name)
        params = tuple((p.name, t) for p, t in zip(item.params, ptypes, strict=True))
    hints: dict[Binding, ir.Ty] = {}
    for _ in range(MAX_RETYPES):
        try:
            fn, body = _check_body(syms, item, kind, ret, params, suspends_of, task_var, group_vars, hints)
            break
        except Retype as want:  # a literal-typed local met a use of another type: again, typed so
            hints[want.binding] = want.ty
    else:  # pragma: no cover - each binding is retyped at most once, and a body has few
        raise ControlFlowError(f"'{item.name}': too many locals typed by a later use", item.span)
    if ret != "unit" and not always_returns(body):
        raise ControlFlowError(
            f"'{item.name}' must return {a_or_an(str(ret))} on every path",
            item.ret.span if isinstance(item, ast.FnDef) and item.ret is not None else item.span,
            (Note("end the body with 'return value;' or a final expression"),),
        )
    suspends = any_suspends(body)
    locals_ = tuple(fn.locals.items())
    return Function(item.name, kind, params, ret, locals_, body, suspends, item.span, fn.run_time_indices)


def _check_body(
    syms: Symbols,
    item: ast.FnDef | ast.Task,
    kind: str,
    ret: ir.Ty,
    params: tuple[tuple[str, str], ...],
    suspends_of: Callable[[str], bool],
    task_var: tuple[str, str] | None,
    group_vars: tuple[tuple[str, str], ...],
    hints: dict[Binding, ir.Ty],
) -> tuple[FnState, tuple[ir.Stmt, ...]]:
    fn = FnState(item.name, kind, ret, hints=dict(hints))
    seen: dict[str, ast.Span] = {}
    item_params = item.params if isinstance(item, ast.FnDef) else ()
    for (pname, pty), p in zip(params, item_params, strict=True):
        if pname in seen:
            raise DuplicateNameError(f"parameter '{pname}' is bound more than once", p.span)
        seen[pname] = p.span
        fn.scopes[0][pname] = fn.fresh(pname, pty)
    for name, ty in (*group_vars, *((task_var,) if task_var is not None else ())):
        var = fn.fresh(name, ty)  # a group's variable, then the task's own: both read-only
        fn.scopes[0][name] = POISONED if ty == POISONED else var  # a group range that failed
        fn.readonly.add(var)
    checker = BodyChecker(syms, fn, suspends_of)
    errors: list[GasyncError] = []
    body = checker.block(item.body, tail_to="return" if kind != "task" else None, errors=errors)
    for binding, (err, wide) in fn.provisional.items():
        if binding not in fn.decided:  # no use needed the wider type: the literal's default is i32
            errors.append(_undecided(err, binding[2], wide))
    if errors:  # the body's other checks would only see the statements that passed
        raise ErrorGroup(capped(errors, item.name))
    return fn, tuple(body)


def const_checker(syms: Symbols) -> BodyChecker:
    """A checker for compile-time expressions: no locals, no awaits."""

    def no_async(name: str) -> bool:
        raise FutureMisuseError("a constant expression cannot await")

    return BodyChecker(syms, FnState(CONST_FN, "fn", "unit"), no_async)


def _undecided(err: GasyncError, name: str, wide: str) -> GasyncError:
    """The E0204 of `let u = 3000000000;` where no use gave `u` a wider type."""
    note = Note(f"give it a type, 'let {name}: {wide} = ...', or use it where {a_or_an(wide)} is needed")
    return type(err)(err.message, err.span, (*err.notes, note))
