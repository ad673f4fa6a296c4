"""Error recovery in a body: go on after a statement fails, so one check reports several errors.

Only the top-level statements of a fn, async fn or task body recover (``check_function``
passes a list to collect into); a statement nested in a block fails as a whole, so the
checker's state is the one a statement leaves when it succeeds, restored below. What a
failed statement would have bound is *poisoned*: a ``let`` with a declared type binds
its name with that type, any other binding a marker whose use raises DependentError,
which the planner drops when a primary error exists (no cascade of "cannot find value").
Past ``MAX_BODY_ERRORS`` the rest of the body is still checked, but its errors are only
counted: a note on the last one shown says how many more there are (:func:`capped`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner import ir
from gasync.planner.errors import DependentError, PlanError
from gasync.planner.exprs import POISONED, ExprChecker, FnState

MAX_BODY_ERRORS = 10


def recovering(
    checker: ExprChecker, check: Callable[[], list[ir.Stmt]], stmt: ast.Stmt, errors: list[GasyncError]
) -> list[ir.Stmt]:
    """``check()``'s statements; if it fails, none, with the error in ``errors`` and what
    ``stmt`` binds poisoned."""
    fn = checker.fn
    saved = (len(fn.scopes), fn.loops, fn.parallel, fn.async_depth, fn.ret, dict(checker.block_hints))
    try:
        return check()
    except GasyncError as exc:
        errors.append(exc)
        depth, fn.loops, fn.parallel, fn.async_depth, fn.ret, checker.block_hints = saved
        del fn.scopes[depth:]
        checker.pre = []  # awaits hoisted out of the failed statement
        _poison(fn, stmt)
        return []


def _poison(fn: FnState, stmt: ast.Stmt) -> None:
    if isinstance(stmt, ast.Let):
        declared = stmt.type.name if stmt.type is not None else None
        fn.scopes[-1][stmt.name] = fn.fresh(stmt.name, declared) if declared in ir.SCALARS else POISONED
    elif isinstance(stmt, ast.LetTuple):
        for name in stmt.names:
            if name is not None:
                fn.scopes[-1][name] = POISONED


def capped(errors: list[GasyncError], body: str) -> list[GasyncError]:
    """At most ``MAX_BODY_ERRORS`` of a body's errors, the last one shown with a note that
    counts the others (and, for the command line's summary, ``not_shown``)."""
    primary = [e for e in errors if not isinstance(e, DependentError)]
    if len(primary) <= MAX_BODY_ERRORS:
        return errors
    hidden = len(primary) - MAX_BODY_ERRORS
    last = copy.copy(primary[MAX_BODY_ERRORS - 1])
    more = "1 more error" if hidden == 1 else f"{hidden} more errors"
    last.notes = (*last.notes, Note(f"{more} in '{body}' not shown: at most {MAX_BODY_ERRORS} are shown per body"))
    if isinstance(last, PlanError):
        last.not_shown = hidden
    return [*primary[: MAX_BODY_ERRORS - 1], last]
