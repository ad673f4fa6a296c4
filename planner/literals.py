"""Whether a literal's type is left to its context (``let n: i64 = 5``, ``x + 1``)."""

from __future__ import annotations

import math

from gasync.dsl import ast

# the largest finite value of each float type (a literal past it would round to infinity)
FLOAT_MAX = {"f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308}
COMPARE = ("==", "!=", "<", ">", "<=", ">=")


def flexible(e: ast.Expr, memo: dict[int, tuple[ast.Expr, bool]] | None = None) -> bool:
    """True for expressions whose type the context decides: literals, operators over
    them, and a shift of one (a shift has its left operand's type, as in Rust, so
    in ``(1 << k) - n`` the 1 takes n's type). A shift counts only when its amount
    cannot suspend or call, as the other operand of a pair is typed first.

    ``memo`` (by node identity; it holds each node, so no id is reused) keeps a long
    chain such as a 1,000-term sum linear: each level asks again about those below."""
    if memo is not None and id(e) in memo:
        return memo[id(e)][1]
    result = False
    if isinstance(e, ast.IntLit | ast.FloatLit):
        result = True
    elif isinstance(e, ast.Unary):
        result = flexible(e.operand, memo)
    elif isinstance(e, ast.Binary) and e.op in ("<<", ">>"):
        result = flexible(e.left, memo) and plain(e.right)
    elif isinstance(e, ast.Binary) and e.op not in COMPARE and e.op not in ("&&", "||"):
        result = flexible(e.left, memo) and flexible(e.right, memo)
    if memo is not None:
        memo[id(e)] = (e, result)
    return result


def literal_block(e: ast.Expr | ast.Reduce) -> bool:
    """An awaited ``literal_future`` (``async { 3 }.await``): a ``let`` of it takes its type from
    a later use, as a ``let`` of the literal would (decision 59)."""
    return isinstance(e, ast.Await) and literal_future(e.future)


def literal_future(e: ast.Expr) -> bool:
    """An async block whose every value is ``flexible``: its tail and its ``return``s'
    (``async { 3 }``, ``async { yield_now().await; 1 << 4 }``, ``async { return 3; }``)."""
    from gasync.planner.graphs import ast_nodes  # (graphs imports the planner's modules)

    if not isinstance(e, ast.AsyncBlock):
        return False
    tail = (e.body.tail,) if e.body.tail is not None else ()
    values = [*tail, *(n.value for n in ast_nodes(e.body) if isinstance(n, ast.Return))]
    return bool(values) and all(v is not None and flexible(v) for v in values)


def plain(e: ast.Expr) -> bool:
    """True for an expression without awaits, calls or async blocks."""
    if isinstance(e, ast.IntLit | ast.FloatLit | ast.BoolLit | ast.Name):
        return True
    if isinstance(e, ast.Unary):
        return plain(e.operand)
    if isinstance(e, ast.Binary):
        return plain(e.left) and plain(e.right)
    if isinstance(e, ast.Cast):
        return plain(e.expr)
    if isinstance(e, ast.Index):
        return all(plain(ix) for ix in e.indices)
    return False


def float_fits(value: float, ty: str) -> bool:
    """Whether a float literal (or define) of ``value`` is finite in ``ty``: in f32, one that
    rounds to f32's largest value fits, and one that rounds past it is infinite."""
    from gasync.planner.consteval import to_f32

    return math.isfinite(value) and (ty != "f32" or math.isfinite(to_f32(value)))
