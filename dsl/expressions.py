"""Expressions from the grammar's flat lists: precedence and spans applied here.

The grammar (dsl/grammar.lark) reads a chain of binary operators as one flat
list ``operand op operand op ...`` and an operand as ``prefix* postfix ("as"
type)*``, so that an operand is reduced a few times rather than once for each
of the thirteen precedence levels. :func:`fold_binary` groups the list by the
table of docs/language.md "Precedence" (every level left-associative; the
grammar already refuses a second comparison between two ``&&``/``||``), and
:func:`fold_operand` applies the prefix operators, then the casts. The nodes
and spans are those of one grammar rule per level: a node spans its first
operand to its last, parentheses included, and a parenthesised operand
(:class:`~gasync.dsl.reductions.Paren`) is unwrapped inside it.

Both folds are loops over the list, so a long chain such as ``a + b + ... + z``
costs no recursion here; the tree it builds is as deep as the chain is long.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from gasync.dsl import ast
from gasync.dsl.depth import MAX_DEPTH, too_deep
from gasync.dsl.reductions import Paren, held, hold

# Binding strength of each binary operator's terminal, tightest highest.
PRECEDENCE = {
    "MUL_OP": 9,
    "ADD_OP": 8,
    "SHIFT_OP": 7,
    "AMP": 6,
    "CARET": 5,
    "BAR": 4,
    "CMP_OP": 3,
    "ANDAND": 2,
    "OROR": 1,
}


def _inner(value: Any) -> Any:
    return value.expr if isinstance(value, Paren) else value


def _between(first: ast.Span, last: ast.Span) -> ast.Span:
    return ast.Span(first.line, first.column, last.end_line, last.end_column)


def fold_binary(items: list[Any]) -> ast.Binary:
    """Group ``[operand, op, operand, ...]`` (two operands at least) by precedence."""
    operands = [items[0]]
    ops: list[Token] = []
    for k in range(1, len(items), 2):
        op = items[k]
        strength = PRECEDENCE[op.type]
        while ops and PRECEDENCE[ops[-1].type] >= strength:
            _combine(operands, ops)
        ops.append(op)
        operands.append(items[k + 1])
    while ops:
        _combine(operands, ops)
    result: ast.Binary = operands[0]
    return result


def _combine(operands: list[Any], ops: list[Token]) -> None:
    """Replace the last two operands by their Binary under the last operator."""
    right = operands.pop()
    left = operands.pop()
    op = ops.pop()
    node = ast.Binary(str(op), _inner(left), _inner(right), _between(left.span, right.span))
    _measure(node, 1 + max(_height(left), _height(right)), op)
    operands.append(node)


def _height(value: Any) -> int:
    heights = held.heights
    return heights.get(id(_inner(value)), 0) if heights is not None else 0


def _measure(node: Any, height: int, token: Token | None) -> None:
    """As dsl/reductions.py's ``measure``, for a node a fold builds: each is a level."""
    heights = held.heights
    if heights is None:
        return
    heights[id(node)] = height
    heights.nodes.append(node)
    if height > MAX_DEPTH and not held.deep:
        held.deep = True
        hold(too_deep(token, node))


def fold_operand(items: list[Any]) -> ast.Expr:
    """``[prefix..., postfix, 'as', type, 'as', type, ...]`` (one prefix or cast at least)."""
    k = 0
    while isinstance(items[k], Token):  # the postfix expression is a node, never a token
        k += 1
    value = items[k]
    for tok in reversed(items[:k]):
        end = value.span
        unary = ast.Unary(str(tok), _inner(value), ast.Span(tok.line, tok.column, end.end_line, end.end_column))
        _measure(unary, 1 + _height(value), tok)
        value = unary
    for j in range(k + 2, len(items), 2):
        cast = ast.Cast(_inner(value), items[j], _between(value.span, items[j].span))
        _measure(cast, 1 + _height(value), items[j - 1])
        value = cast
    result: ast.Expr = value
    return result
