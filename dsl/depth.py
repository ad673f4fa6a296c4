"""How deep a program nests, bounded so that every later stage can walk it.

The compiler's passes are recursive tree walks, run with a large stack (see
``pipeline.deep``). That stack is sized for ``MAX_DEPTH`` levels, where one
level is a block ``{ ... }`` or an expression node that holds another: an
operator, a cast, a call, an index, a method call or an ``.await``. Parentheses
cost nothing (they leave no node), and neither do the statements between
blocks. So 1,000 nested ``if``s are 1,001 levels (the task's block too), a
1,000-term sum is 999, and ``async { ... }.await`` nested 1,000 deep is 2,000.

Levels are counted while the parser builds the AST, bottom-up (each node's
height from its children's, dsl/reductions.py), so the error is at the
innermost construct that holds more than the limit.
"""

from __future__ import annotations

from lark import Token

from gasync.dsl import ast
from gasync.dsl.diagnostics import NestingTooDeepError, Note

MAX_DEPTH = 4096


def too_deep(token: Token | None, node: object) -> NestingTooDeepError:
    """The error at a construct (its first token: an operator, '{', a name) that holds more
    than MAX_DEPTH levels."""
    span = getattr(node, "span", ast.NOSPAN)
    if token is not None and token.line:
        span = ast.Span(token.line, token.column or 0, token.end_line or 0, token.end_column or 0)
    return NestingTooDeepError(
        f"nesting deeper than {MAX_DEPTH} levels",
        span,
        (
            Note(
                "each enclosing block and each operator, call, index, cast or '.await' around "
                "this point is a level; move part of it into a fn, or name a part with 'let'"
            ),
        ),
    )
