"""How deep a program nests, bounded so that every later stage can walk it.

The compiler's passes are recursive tree walks, run with a large stack (see
``pipeline.deep``). That stack is sized for ``MAX_DEPTH`` levels, where one
level is a block ``{ ... }`` or an expression node that holds another: an
operator, a cast, a call, an index, a method call or an ``.await``. Parentheses
cost nothing (they leave no node), and neither do the statements between
blocks. So 1,000 nested ``if``s are 1,001 levels (the task's block too), a
1,000-term sum is 999, and ``async { ... }.await`` nested 1,000 deep is 2,000.

The Lark tree is measured with an explicit stack, before it becomes an AST, and
the first construct past the limit (in source order) is the error.
"""

from __future__ import annotations

from lark import Token, Tree

from gasync.dsl import ast
from gasync.dsl.diagnostics import NestingTooDeepError, Note

MAX_DEPTH = 4096
LEVELS = frozenset({"block", "binary", "unary", "cast", "await_expr", "method_call", "call", "index"})


def check_depth(tree: Tree[Token]) -> None:
    """Raise NestingTooDeepError at the first construct nested more than MAX_DEPTH levels."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 0)]
    while stack:
        node, level = stack.pop()
        if node.data in LEVELS:
            level += 1
            if level > MAX_DEPTH:
                raise NestingTooDeepError(
                    f"nesting deeper than {MAX_DEPTH} levels",
                    _where(node),
                    (
                        Note(
                            "each enclosing block and each operator, call, index, cast or '.await' around "
                            "this point is a level; move part of it into a fn, or name a part with 'let'"
                        ),
                    ),
                )
        stack.extend((c, level) for c in reversed(node.children) if isinstance(c, Tree))


def _where(node: Tree[Token]) -> ast.Span:
    """One caret on the construct itself: an operator, a name, an opening '{' or '.await'."""
    own = [c for c in node.children if isinstance(c, Token)]
    if node.data == "binary" and own:
        tok = own[0]
    elif node.data in ("unary", "call", "index", "method_call") and own:
        tok = own[-1] if node.data == "method_call" else own[0]
    else:
        meta = node.meta
        if node.data == "await_expr":  # the node ends with '.await'
            return ast.Span(meta.end_line, meta.end_column - 6, meta.end_line, meta.end_column)
        return ast.Span(meta.line, meta.column, meta.line, meta.column + 1)
    return ast.Span(tok.line or 0, tok.column or 0, tok.end_line or 0, tok.end_column or 0)
