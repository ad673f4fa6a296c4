"""A block's tail whose value would go nowhere (decision 67).

Only a function's body, an async block and a reduction's body give a value; the
blocks of an ``if`` (a statement, decision 9), of a loop, of a ``select`` arm and
a task's body do not. A tail there must give ``()`` (``if c { f().await }``); one
with a value (``if c { 1 } else { 2 }``) is an error, as in Rust, rather than a
value silently dropped.
"""

from __future__ import annotations

from gasync.dsl import ast
from gasync.dsl.diagnostics import Note
from gasync.dsl.syntax_errors import IF_VALUE
from gasync.planner import ir
from gasync.planner.errors import TypeMismatchError


def dropped_type(s: ir.Stmt) -> ir.Ty | None:
    """The type of the value that a tail, checked as the statement ``s``, drops; None for '()'."""
    ty: ir.Ty = "unit"
    if isinstance(s, ir.Eval):
        ty = s.expr.ty
    elif isinstance(s, ir.AwaitS) and isinstance(s.future.ty, ir.FutureT):
        ty = s.future.ty.output
    return None if _unit(ty) else ty


def _unit(ty: ir.Ty) -> bool:
    return ty == "unit" or (isinstance(ty, ir.TupleT) and all(_unit(t) for t in ty.elems))


def dropped_value(ty: ir.Ty, span: ast.Span, branch: bool, returns: bool) -> TypeMismatchError:
    """The error for a tail of type ``ty`` where no value goes: ``branch`` where the block is an
    'if''s, ``returns`` where the enclosing function (or async block) returns a value."""
    if not branch:
        note = "this block gives no value (only a function's body, an 'async' block and a reduction's body do)"
        return TypeMismatchError(
            f"mismatched types: expected '()', found {ty}", span, (Note(note + ": end it with ';' to drop it"),)
        )
    notes = [Note(f"'if' is a statement, not an expression, so its blocks give no value: {IF_VALUE}")]
    if returns:
        notes.append(Note("to return it, write 'return' in each branch: 'if c { return 1; } else { return 2; }'"))
    notes.append(Note("to drop the value, end it with ';'"))
    return TypeMismatchError(f"mismatched types: expected '()', found {ty}", span, tuple(notes))
